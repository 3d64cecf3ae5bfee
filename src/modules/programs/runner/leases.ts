import type { EntityManager } from '@mikro-orm/postgresql';
import { at, placeholders, query } from './sql.js';

/** Pushes the lease of the rows this runner is still calling, so a long call is not taken over. */
export async function renewLeases(em: EntityManager, tokens: string[], leaseUntil: Date, now: Date): Promise<void> {
  if (tokens.length === 0) return;
  await query(
    em,
    `update execution_contacts set lease_until = ?::timestamptz, updated_at = ?::timestamptz
      where status = 'in_progress' and claimed_by in (${placeholders(tokens)})`,
    [at(leaseUntil), at(now), ...tokens],
  );
}

/**
 * Rows whose lease ran out (their runner died or lost the database mid-call) go back to pending.
 * The attempt the claim counted is taken back: the call may never have happened, and a late
 * result from the old holder is dropped because its token is gone. The credit stays spent.
 * Rows are taken with SKIP LOCKED and executions updated in id order, so two runners recovering
 * at once neither wait on each other's rows nor deadlock.
 */
export async function recoverExpiredLeases(em: EntityManager, now: Date): Promise<number> {
  return em.transactional(async (tx) => {
    const expired = await query<{ id: string; execution_id: string }>(
      tx,
      `select id, execution_id from execution_contacts
        where status = 'in_progress' and lease_until < ?::timestamptz
        order by id for update skip locked`,
      [at(now)],
    );
    if (expired.length === 0) return 0;
    const ids = expired.map((row) => row.id);
    await query(
      tx,
      `update execution_contacts set status = 'pending', claimed_by = null, lease_until = null,
              attempts = greatest(attempts - 1, 0), updated_at = ?::timestamptz
        where id in (${placeholders(ids)})`,
      [at(now), ...ids],
    );
    const perExecution = new Map<string, number>();
    for (const row of expired) perExecution.set(row.execution_id, (perExecution.get(row.execution_id) ?? 0) + 1);
    for (const [executionId, count] of [...perExecution].sort(([a], [b]) => a.localeCompare(b))) {
      await query(
        tx,
        `update executions set contacts_in_progress = contacts_in_progress - ?, contacts_pending = contacts_pending + ?, updated_at = ?::timestamptz where id = ?`,
        [count, count, at(now), executionId],
      );
    }
    return expired.length;
  });
}
