import type { EntityManager } from '@mikro-orm/postgresql';
import { at, placeholders, query } from '../../../db/sql.js';

/**
 * Leases are written and compared on one clock: the database's `now()` in production, so runners
 * whose clocks drift never take over each other's live calls. A runner with an injected clock
 * (tests pin it) passes that time instead, for the write and the compare alike, so a test can
 * expire a lease by moving its clock rather than by sleeping. `null` means the database clock.
 */
export const LEASE_NOW = 'coalesce(?::timestamptz, now())';

export function leaseNow(clockTime: Date | null): string | null {
  return clockTime && at(clockTime);
}

/**
 * Pushes the lease of the rows this runner is still calling, so a long call is not taken over. Rows
 * another transaction holds (a batch recording their calls) are skipped, not waited for: waiting
 * while holding the others could deadlock with that batch, and a row being recorded needs no lease.
 */
export async function renewLeases(em: EntityManager, tokens: string[], leaseMs: number, clockTime: Date | null, now: Date): Promise<void> {
  if (tokens.length === 0) return;
  await query(
    em,
    `update execution_contacts set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond', updated_at = ?::timestamptz
      where id in (select id from execution_contacts where status = 'in_progress' and claimed_by in (${placeholders(tokens)})
                    order by id for no key update skip locked)`,
    [leaseNow(clockTime), leaseMs, at(now), ...tokens],
  );
}

/**
 * Rows whose lease ran out with no live call (their runner died before placing it, or it ended
 * and its record was lost) go back to pending; rows with a live call are reconciled with their
 * carrier first (reconcile.ts).
 * The attempt the claim counted is taken back: the call may never have happened. The row keeps
 * its token, so a late result from the old holder is still recorded while nobody has claimed the
 * row again (the contact is not dialed twice); a new claim overwrites the token and drops it.
 * The credit stays spent. Rows are taken with SKIP LOCKED and executions updated in id order, so
 * two runners recovering at once neither wait on each other's rows nor deadlock.
 */
export async function recoverExpiredLeases(em: EntityManager, clockTime: Date | null, now: Date): Promise<number> {
  return em.transactional(async (tx) => {
    const expired = await query<{ id: string; execution_id: string }>(
      tx,
      `select id, execution_id from execution_contacts ec
        where status = 'in_progress' and lease_until < ${LEASE_NOW}
          and not exists (select 1 from calls c where c.execution_contact_id = ec.id and c.claim_token = ec.claimed_by
                                                  and c.status in ('queued', 'ringing', 'in_progress'))
        order by id for update skip locked`,
      [leaseNow(clockTime)],
    );
    if (expired.length === 0) return 0;
    const ids = expired.map((row) => row.id);
    await query(
      tx,
      `update execution_contacts set status = 'pending', lease_until = null,
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
