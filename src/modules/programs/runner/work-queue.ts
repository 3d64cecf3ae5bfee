import type { EntityManager } from '@mikro-orm/postgresql';
import { ProgramCarrier } from '../../telephony/telephony.enums.js';
import type { ExecutionEvents } from '../execution-events.js';
import { assertMove } from '../execution-state.js';
import { ExecutionStatus, WaitingReason } from '../program.enums.js';
import { isWithinWindow } from './calling-window.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { at, placeholders, query } from '../../../db/sql.js';
import { addOutcomeCounts } from '../execution-outcomes.js';
import { CreditEntryKind } from '../../organizations/credit-ledger.entity.js';
import { CREDITS_RESERVED_SQL } from '../../organizations/organization.entity.js';
import { RESERVATION_BLOCK_MAX, releaseReservations, spendReserved, type Reservation } from './credit-reservations.js';
import { randomUUID } from 'node:crypto';
import { waitingOnContacts, type Waiting } from './waiting.js';
import { CONCURRENCY_LIMIT, noteWaiting, pendingZones } from './claim-waiting.js';
import { countBy, openCalls, pacingAllowance, suppressCalls, type CandidateRow, type Pacing } from './claim-rows.js';
import type { RunnableExecution } from './runnable-execution.js';

export { listRunnable, loadExecution, loadExecutions, type RunnableExecution } from './runnable-execution.js';
export { NOT_PLACED } from './claim-waiting.js';

/**
 * The execution moved (paused, stopped, filled by another runner) between a claim's first read and
 * its update: the claim is rolled back, nothing of it happened, and the runner claims again.
 */
export class ClaimRaced extends Error {
  constructor(executionId: string) {
    super(`Execution ${executionId} changed while its calls were being claimed; the claim was rolled back`);
    this.name = 'ClaimRaced';
  }
}

/** A row this runner holds: `token` is written to claimed_by and must still be there to record the call. */
export interface ClaimedCall {
  executionContactId: string;
  token: string;
  execution: RunnableExecution;
  phone: string;
  timeZone: string | null;
  attempt: number;
  /** The call record opened for it (status queued), in the claim's transaction. */
  callId: string;
  contactId: string | null;
}

/** What a claim did: the calls it took, and why the execution's other pending contacts wait, when that changed (to log it). */
export interface Claim {
  calls: ClaimedCall[];
  /** The execution now waits for a reason other than before (null: nothing holds its pending contacts back any more); undefined: unchanged. */
  waiting?: Waiting | null;
}

/**
 * Claims due pending rows of one execution inside the calling window, up to its free slots, and
 * spends one credit per call, all in one transaction with the counters. The execution's row is
 * updated last, on condition that it is still running and the calls still fit its concurrency
 * (else the whole claim rolls back: ClaimRaced), so two runners cannot both fill the same slots
 * and a pause that committed first is never dialed past; rows another transaction holds are skipped. When the credits run out, the rows not paid for stay pending and the execution
 * moves to paused_no_credits. Contacts that opted out or were deleted since the start fail without a call.
 *
 * The free slots are the execution's, whichever runner holds its calls: a runner claims all of them
 * (as far as the pending rows go), so its batches are sized by the work there is, not by how many
 * replicas run. Claims of one execution are serialized (an advisory lock per execution, held to
 * the commit; recorders and control moves do not take it), and each counts the calls in progress in the
 * statement that picks its rows, after the previous claim committed, so two runners do not both
 * take the same free slots and roll one claim back.
 *
 * Each check that leaves pending contacts undialed says why (waiting.ts): that finding is the
 * execution's waitingReason and nextCallAt, written with an execution.progress event in the claim's
 * transaction when it differs from the last one, so what the API shows is this decision itself.
 */
export async function claimCalls(
  em: EntityManager,
  execution: RunnableExecution,
  /** `leaseClock`: the time leases are measured from; null for the database clock (see leases.ts). */
  /**
   * `reservation`: the runner pays from its credit reservation for the execution (credit-reservations.ts),
   * topped up from the organization in blocks; without it every claim takes its credits from the organization's row.
   * `carrierMissing`: what the runner lacks to place this program's calls (its carrier's adapter, PUBLIC_URL); nothing is claimed then.
   */
  options: {
    now: Date;
    token: string;
    leaseMs: number;
    leaseClock?: Date | null;
    events: ExecutionEvents;
    reservation?: Reservation;
    carrierMissing?: string | null;
  },
): Promise<Claim> {
  let stoppedRunning = false;
  const claimed = await claimIn(em, execution, options, () => (stoppedRunning = true));
  // It completed or ran out of credits: what the runners still hold for it goes back now (else the next tick's pass does it).
  if (stoppedRunning && options.reservation) await releaseReservations(em, { executionIds: [execution.id] }).catch(() => 0); // else the tick's pass gives them back
  return claimed;
}

interface ClaimState {
  status: ExecutionStatus;
  contacts_pending: number;
  contacts_in_progress: number;
  runner_waiting_reason: WaitingReason | null;
  runner_next_call_at: Date | string | null;
}

async function claimIn(em: EntityManager, execution: RunnableExecution, options: Parameters<typeof claimCalls>[2], stopped: () => void): Promise<Claim> {
  const { now, token } = options;
  const moved = (from: ExecutionStatus, to: ExecutionStatus, reason: 'no_credits' | 'no_contacts_left') => ({
    executionId: execution.id,
    programId: execution.programId,
    organizationId: execution.organizationId,
    from,
    to,
    reason,
  });
  return options.events.transaction(em, async (tx, record) => {
    // The execution's row is read without a lock: every decision below is made again by the
    // conditional update at the end, which is the only statement that locks it (the row every
    // recorder and control move locks too), so the row is held from that update to the commit and no
    // longer. The same statement waits for the execution's claim lock (another runner's claim of it
    // commits first), so what it read may be a moment old: the free slots are counted again where
    // the rows are picked.
    const [state] = await query<ClaimState>(
      tx,
      `select e.status, e.contacts_pending, e.contacts_in_progress, e.runner_waiting_reason, e.runner_next_call_at
         from executions e cross join lateral (select pg_advisory_xact_lock(hashtextextended(?, 0))) as claiming
        where e.id = ?`,
      [`claim-execution:${execution.id}`, execution.id],
    );
    if (!state || state.status !== ExecutionStatus.running) return { calls: [] };
    /** The claim's answer, with why the contacts it left wait (written when that changed). */
    const done = async (calls: ClaimedCall[], waiting: Waiting | null): Promise<Claim> => ({
      calls,
      waiting: await noteWaiting(tx, execution, state, waiting, now),
    });
    if (state.contacts_pending === 0 && state.contacts_in_progress === 0) {
      const [locked] = await query<{ status: ExecutionStatus; contacts_pending: number; contacts_in_progress: number }>(
        tx,
        'select status, contacts_pending, contacts_in_progress from executions where id = ? for update',
        [execution.id],
      );
      if (!locked || locked.status !== ExecutionStatus.running || locked.contacts_pending !== 0 || locked.contacts_in_progress !== 0) return { calls: [] };
      assertMove(locked.status, ExecutionStatus.completed);
      await query(tx, `update executions set status = 'completed', actual_end_at = ?::timestamptz, updated_at = ?::timestamptz where id = ?`, [
        at(now),
        at(now),
        execution.id,
      ]);
      record(moved(locked.status, ExecutionStatus.completed, 'no_contacts_left'));
      stopped();
      return { calls: [] };
    }
    // Nothing left to dial: the calls in progress end it.
    if (state.contacts_pending === 0) return done([], null);
    // Full as of that read: nothing to claim (nor a carrier's pacing row to lock).
    if (state.contacts_in_progress >= execution.maxConcurrentCalls) return done([], CONCURRENCY_LIMIT);
    // At most the execution's concurrency; the statement that picks the rows takes the calls in progress off it.
    let slots = execution.maxConcurrentCalls;
    let pacing: Pacing | null = null;
    if (options.carrierMissing) return done([], { reason: WaitingReason.carrier_not_configured, nextCallAt: null, detail: options.carrierMissing });
    if (execution.carrier !== ProgramCarrier.simulator) {
      // The connection was deleted, or the number moved to another carrier: nothing is placed until it is mended.
      if (!execution.connectionId) {
        const detail = execution.fromNumber
          ? `the caller ID ${execution.fromNumber} has no ${execution.carrier} carrier connection`
          : `the program has no caller ID (fromNumberId) on ${execution.carrier}`;
        return done([], { reason: WaitingReason.carrier_not_configured, nextCallAt: null, detail });
      }
      pacing = await pacingAllowance(tx, execution.connectionId, execution.callsPerSecond ?? 1, options.leaseClock ?? null);
      slots = Math.min(slots, pacing.allowance);
      if (slots <= 0) return done([], { reason: WaitingReason.carrier_pacing, nextCallAt: pacing.nextAt });
    }

    const due = `ec.execution_id = ? and ec.status = 'pending' and (ec.next_attempt_at is null or ec.next_attempt_at <= ?::timestamptz)`;
    // The window is checked once per time zone, so a page of rows outside it never blocks the queue
    // (without a window every zone is open, and nothing needs checking).
    let named: string[] = [];
    let zoneClauses = ['true'];
    if (execution.callingWindow) {
      const zones = await pendingZones(tx, execution, now);
      const open = zones.filter((zone) => zone.dueNow && isWithinWindow(now, zone.timeZone, execution.callingWindow)).map((zone) => zone.timeZone);
      if (open.length === 0) return done([], waitingOnContacts(zones, execution.callingWindow, now, execution.scheduledStopAt));
      named = open.filter((zone): zone is string => zone !== null);
      zoneClauses = [...(named.length ? [`ec.time_zone in (${placeholders(named)})`] : []), ...(open.includes(null) ? ['ec.time_zone is null'] : [])];
    }
    // The free slots: the execution's calls in progress as the last claim of it (this runner's or
    // another's) committed them, read after the claim lock. They are a number in the LIMIT below, not
    // an expression, so the planner plans for the rows taken: with an expression it planned for a tenth
    // of the pending rows and joined every contact (1.3 s a claim at 1M pending; docs/development/runner-claim.md).
    const [progress] = await query<{ contacts_in_progress: number }>(tx, 'select contacts_in_progress from executions where id = ?', [execution.id]);
    const take = Math.max(0, Math.min(slots, execution.maxConcurrentCalls - Number(progress?.contacts_in_progress ?? 0)));
    // The do-not-call list is read here, in the statement that claims, so a number added a moment
    // ago is never dialed. A number in a live call of the same program (another execution's, a
    // paused one's still on the line) is not claimed until that call ends: one person, one call.
    const candidates = await query<CandidateRow>(
      tx,
      `select ec.id, ec.contact_id, ec.phone, ec.time_zone, ec.attempts,
              case when exists (select 1 from do_not_call_entries d where d.organization_id = ec.organization_id and d.phone = ec.phone) then 'do_not_call'
                   when c.id is null then 'contact_deleted' when c.opted_out then 'opted_out' end as gone
         from execution_contacts ec left join contacts c on c.id = ec.contact_id
        where ${due} and (${zoneClauses.join(' or ')})
          and not exists (select 1 from calls l where l.program_id = ? and l.to_number = ec.phone and l.direction = 'outbound'
                                                  and l.status in ('queued', 'ringing', 'in_progress'))
        order by ec.next_attempt_at nulls first, ec.created_at, ec.id
        limit ?
        for update of ec skip locked`,
      [execution.id, at(now), ...named, execution.programId, take],
    );

    const gone = candidates.filter((row) => row.gone).map((row) => row.id);
    const suppressed = candidates.filter((row) => row.gone === 'do_not_call');
    await suppressCalls(tx, execution, suppressed, now);
    for (const reason of ['do_not_call', 'opted_out', 'contact_deleted'] as const) {
      const failing = candidates.filter((row) => row.gone === reason).map((row) => row.id);
      if (failing.length === 0) continue;
      await query(
        tx,
        `update execution_contacts set status = 'failed', last_outcome = ?, requeue = false, completed_at = ?::timestamptz, updated_at = ?::timestamptz
          where id in (${placeholders(failing)})`,
        [reason, at(now), at(now), ...failing],
      );
    }
    // Two rows of one number in a batch (a contact whose number changed, and another given it) are one person: one call.
    const numbers = new Set<string>();
    const callable = candidates.filter((row) => !row.gone && !numbers.has(row.phone) && Boolean(numbers.add(row.phone)));
    // The rows and their call records first, then the credits: the organization's row (which every
    // claim of the organization updates) is held from the credits to the commit, two statements.
    const callIds = await openCalls(tx, execution, callable, token, options.leaseClock ?? null, now, {
      sql: `update execution_contacts set status = 'in_progress', claimed_by = ?, lease_until = ${LEASE_NOW} + ? * interval '1 millisecond',
                   attempts = attempts + 1, updated_at = ?::timestamptz
             where id in (${placeholders(callable)})`,
      params: [token, leaseNow(options.leaseClock ?? null), options.leaseMs, at(now), ...callable.map((row) => row.id)],
    });
    // The credits and their ledger row (one per claimed batch) in one statement: as many as the
    // organization has, up to one per callable row. The row is locked FOR NO KEY UPDATE, as an UPDATE
    // locks it, so other transactions' inserts that reference the organization (events) go on.
    let paidCount = 0;
    /** Credits other reservations of the organization hold: while there are some, it has not run out. */
    let reservedElsewhere = 0;
    if (callable.length > 0 && options.reservation) {
      const block = Math.max(callable.length, Math.min(state.contacts_pending, RESERVATION_BLOCK_MAX));
      const spent = await spendReserved(tx, options.reservation, {
        organizationId: execution.organizationId,
        executionId: execution.id,
        count: callable.length,
        block,
      });
      paidCount = spent.taken;
      reservedElsewhere = spent.reservedElsewhere;
    } else if (callable.length > 0) {
      const [spent] = await query<{ credit_balance: number; taken: number }>(
        tx,
        `with t as (select id, least(greatest(credit_balance, 0), ?::int) as taken from organizations where id = ? for no key update),
              spent as (update organizations o set credit_balance = o.credit_balance - t.taken from t where o.id = t.id
                         returning o.credit_balance + ${CREDITS_RESERVED_SQL('o')} as credit_balance, t.taken),
              ledger as (insert into credit_ledger (id, organization_id, kind, amount, balance_after, reason, execution_id, created_at)
                         select ?, ?, ?, -taken, credit_balance, null, ?, now() from spent where taken > 0)
         select credit_balance, taken from spent`,
        [callable.length, execution.organizationId, randomUUID(), execution.organizationId, CreditEntryKind.spend, execution.id],
      );
      paidCount = Number(spent?.taken ?? 0);
    }
    const paid = callable.slice(0, paidCount);
    const unpaid = callable.slice(paidCount);
    if (unpaid.length > 0) {
      // Out of credits: the rows not paid for stay pending, as if never claimed.
      const unpaidIds = unpaid.map((row) => row.id);
      await query(tx, `delete from calls where id in (${placeholders(unpaidIds)})`, callIds.slice(paidCount));
      await query(
        tx,
        `update execution_contacts set status = 'pending', claimed_by = null, lease_until = null, attempts = attempts - 1 where id in (${placeholders(unpaidIds)})`,
        unpaidIds,
      );
    }
    // Out of credits only when none are left anywhere: credits another runner holds come back to the
    // organization when unused, so meanwhile the unpaid rows just wait.
    const outOfCredits = unpaid.length > 0 && reservedElsewhere === 0;
    if (outOfCredits) assertMove(state.status, ExecutionStatus.paused_no_credits);
    const ids = paid.map((row) => row.id);
    const taken = ids.length + gone.length;
    /** The counters after this claim: as the update below wrote them, else as read. */
    let after = { pending: state.contacts_pending, inProgress: state.contacts_in_progress };
    if (taken > 0 || outOfCredits) {
      // Still running, and the calls still fit in its concurrency: else nothing of this claim happened.
      const applied = await query<{ contacts_pending: number; contacts_in_progress: number }>(
        tx,
        `update executions set contacts_pending = contacts_pending - ?, contacts_in_progress = contacts_in_progress + ?,
                contacts_failed = contacts_failed + ?, contacts_do_not_call = contacts_do_not_call + ?, credits_spent = credits_spent + ?, status = ?, updated_at = ?::timestamptz,
                outcome_counts = ${addOutcomeCounts('outcome_counts', '?::jsonb')}
          where id = ? and status = 'running' and (?::int = 0 or contacts_in_progress + ?::int <= ?) returning contacts_pending, contacts_in_progress`,
        [
          taken,
          ids.length,
          gone.length,
          suppressed.length,
          ids.length,
          outOfCredits ? ExecutionStatus.paused_no_credits : state.status,
          at(now),
          // The contacts not called, by why: their outcome, as the rows just written say.
          JSON.stringify(countBy(candidates.filter((row) => row.gone).map((row) => String(row.gone)))),
          execution.id,
          ids.length,
          ids.length,
          execution.maxConcurrentCalls,
        ],
      );
      if (applied.length === 0) throw new ClaimRaced(execution.id);
      after = { pending: applied[0]!.contacts_pending, inProgress: applied[0]!.contacts_in_progress };
    }
    const calls = paid.map((row, index) => ({
      executionContactId: row.id,
      token,
      execution,
      phone: row.phone,
      timeZone: row.time_zone,
      attempt: row.attempts + 1,
      callId: callIds[index]!,
      contactId: row.contact_id,
    }));
    if (outOfCredits) {
      record(moved(state.status, ExecutionStatus.paused_no_credits, 'no_credits'));
      stopped();
      return { calls };
    }
    // Why the contacts this claim left wait, in the order the checks above made.
    if (after.pending <= 0) return done(calls, null);
    if (after.inProgress >= execution.maxConcurrentCalls) return done(calls, CONCURRENCY_LIMIT);
    if (unpaid.length > 0)
      return done(calls, {
        reason: WaitingReason.no_credits,
        nextCallAt: null,
        detail: 'the credits left are held by other runners until they give back what they do not spend',
      });
    if (pacing && paid.length >= slots) return done(calls, { reason: WaitingReason.carrier_pacing, nextCallAt: pacing.nextAt });
    return done(calls, waitingOnContacts(await pendingZones(tx, execution, now), execution.callingWindow, now, execution.scheduledStopAt));
  });
}
