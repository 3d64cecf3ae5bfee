import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CreditEntryKind } from '../../organizations/credit-ledger.entity.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { placeholders, query } from '../../../db/sql.js';

/**
 * The most credits a runner reserves for one execution at a time. A block is the execution's
 * pending contacts up to this: one update of the organization's row per block rather than per
 * claim, and never much more than the execution can still spend.
 */
export const RESERVATION_BLOCK_MAX = 1000;

/**
 * Credits a runner holds for one execution (credit_reservations). A runner moves a block of the
 * organization's credits (`organizations.credit_balance`) into its reservation once, then pays its
 * claims from it, so claims of several replicas do not queue on the organization's row. The
 * credits stay the organization's: the balance a user reads is credit_balance plus every
 * reservation (Organization.creditBalance), and what is not spent goes back (releaseReservations)
 * when the execution stops running, when the runner stops, or when a dead runner's lease runs out.
 */
export interface Reservation {
  runnerId: string;
  leaseMs: number;
  /** The runner's injected clock (tests), else null: the database's. */
  leaseClock: Date | null;
}

export interface ReservedSpend {
  /** Credits paid, up to the count asked for. */
  taken: number;
  /** Credits other reservations of the organization still hold (other runners, other executions). */
  reservedElsewhere: number;
}

/**
 * Pays `count` calls of an execution from the runner's reservation, topping it up from the
 * organization first when it holds too few (by `block`, or what is short if that is more, as far
 * as the balance goes), and writes the spend's ledger row: one statement, in the claim's
 * transaction. The reservation's row is locked for the transaction (the runner's own row: no one
 * else waits for it); the organization's only when a block is taken.
 */
export async function spendReserved(
  tx: EntityManager,
  reservation: Reservation,
  spend: { organizationId: string; executionId: string; count: number; block: number },
): Promise<ReservedSpend> {
  const { runnerId } = reservation;
  const { organizationId, executionId, count, block } = spend;
  const [row] = await query<{ taken: number | string; reserved_elsewhere: number | string }>(
    tx,
    `with cur as (select remaining from credit_reservations where runner_id = ? and execution_id = ? for no key update),
          have as (select coalesce((select remaining from cur), 0) as remaining),
          topped as (select o.id, o.credit_balance as before, least(greatest(o.credit_balance, 0), greatest(?::int - (select remaining from have), ?::int)) as amount
                       from organizations o where o.id = ? and (select remaining from have) < ?::int for no key update),
          moved as (update organizations o set credit_balance = o.credit_balance - topped.amount from topped
                     where o.id = topped.id and topped.amount > 0 returning topped.amount),
          pool as (select (select remaining from have) + coalesce((select amount from moved), 0) as total),
          split as (select least(?::int, total) as taken, total - least(?::int, total) as kept from pool),
          saved as (insert into credit_reservations (runner_id, execution_id, organization_id, remaining, lease_until, created_at)
                   select ?, ?, ?, split.kept, ${LEASE_NOW} + ? * interval '1 millisecond', now() from split
                    where split.kept > 0 or exists (select 1 from cur)
                   on conflict (runner_id, execution_id) do update set remaining = excluded.remaining, lease_until = excluded.lease_until),
          elsewhere as (select coalesce(sum(remaining), 0)::int as reserved from credit_reservations
                         where organization_id = ? and not (runner_id = ? and execution_id = ?)),
          ledger as (insert into credit_ledger (id, organization_id, kind, amount, balance_after, reason, execution_id, created_at)
                     select ?, ?, ?, -split.taken,
                            coalesce((select before - amount from topped), (select credit_balance from organizations where id = ?)) + elsewhere.reserved + split.kept,
                            null, ?, now()
                       from split, elsewhere where split.taken > 0)
     select split.taken, elsewhere.reserved as reserved_elsewhere from split, elsewhere`,
    [
      runnerId,
      executionId,
      count,
      block,
      organizationId,
      count,
      count,
      count,
      runnerId,
      executionId,
      organizationId,
      leaseNow(reservation.leaseClock),
      reservation.leaseMs,
      organizationId,
      runnerId,
      executionId,
      randomUUID(),
      organizationId,
      CreditEntryKind.spend,
      organizationId,
      executionId,
    ],
  );
  return { taken: Number(row?.taken ?? 0), reservedElsewhere: Number(row?.reserved_elsewhere ?? 0) };
}

/**
 * Pushes the lease of every reservation the runner holds (each tick), so only a dead runner's run
 * out. A reservation one of its claims is spending from is skipped, not waited for: that claim
 * writes the lease itself.
 */
export async function renewReservations(em: EntityManager, reservation: Reservation): Promise<void> {
  await query(
    em,
    `update credit_reservations set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
      where (runner_id, execution_id) in (select runner_id, execution_id from credit_reservations where runner_id = ?
                                          order by execution_id for no key update skip locked)`,
    [leaseNow(reservation.leaseClock), reservation.leaseMs, reservation.runnerId],
  );
}

/** Which reservations go back to their organization. */
export type ReleaseWhich =
  /** A runner's, when it stops. */
  | { runnerId: string }
  /** These executions' (they stopped running). */
  | { executionIds: string[] }
  /** Every reservation whose execution is not running (paused, stopped, completed, gone) or whose lease ran out (its runner died). */
  | { stale: true; leaseClock: Date | null };

/**
 * Gives reserved credits back to their organizations and deletes the reservations, in one
 * transaction: nothing is lost and nothing counted twice. A reservation a claim is spending from
 * is locked: a runner's or an execution's release waits for that claim (which holds no row it
 * could be waiting for: the execution already moved, or the runner is stopping), the tick's pass
 * over stale reservations skips it and gives it back on a later tick. Returns the credits given back.
 */
export async function releaseReservations(em: EntityManager, which: ReleaseWhich): Promise<number> {
  let where: string;
  let params: unknown[];
  if ('runnerId' in which) {
    where = 'runner_id = ?';
    params = [which.runnerId];
  } else if ('executionIds' in which) {
    if (which.executionIds.length === 0) return 0;
    where = `execution_id in (${placeholders(which.executionIds)})`;
    params = which.executionIds;
  } else {
    where = `lease_until < ${LEASE_NOW} or not exists (select 1 from executions e where e.id = r.execution_id and e.status = 'running')`;
    params = [leaseNow(which.leaseClock)];
  }
  // Cheap when there is nothing to give back (most ticks): one read, no transaction.
  const [any] = await query<{ n: number }>(em, `select 1 as n from credit_reservations r where ${where} limit 1`, params);
  if (!any) return 0;
  return em.transactional(async (tx) => {
    const gone = await query<{ organization_id: string; total: number | string }>(
      tx,
      `with taken as (select runner_id, execution_id from credit_reservations r where ${where}
                       order by runner_id, execution_id for update${'stale' in which ? ' skip locked' : ''}),
            gone as (delete from credit_reservations r using taken
                      where r.runner_id = taken.runner_id and r.execution_id = taken.execution_id returning r.organization_id, r.remaining)
       select organization_id, sum(remaining) as total from gone group by organization_id order by organization_id`,
      params,
    );
    let total = 0;
    // One organization at a time, in id order, so two runners giving back at once never deadlock.
    for (const row of gone) {
      const amount = Number(row.total);
      if (amount === 0) continue;
      await query(tx, 'update organizations set credit_balance = credit_balance + ? where id = ?', [amount, row.organization_id]);
      total += amount;
    }
    return total;
  });
}
