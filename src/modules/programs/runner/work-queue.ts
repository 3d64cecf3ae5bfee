import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ProgramCarrier } from '../../telephony/telephony.enums.js';
import type { FlowEdge, FlowNode } from '../call-flow.types.js';
import type { ExecutionEvents } from '../execution-events.js';
import { assertMove } from '../execution-state.js';
import { ExecutionStatus } from '../program.enums.js';
import type { CallingWindow, RetryPolicy } from '../program.types.js';
import { isWithinWindow } from './calling-window.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { at, placeholders, query } from '../../../db/sql.js';
import { addOutcomeCounts } from '../execution-outcomes.js';
import { CreditEntryKind } from '../../organizations/credit-ledger.entity.js';
import { EventWriter } from '../../events/event-writer.js';
import { Call } from '../../telephony/call.entity.js';
import { callJson } from '../../telephony/call.types.js';
import { CREDITS_RESERVED_SQL } from '../../organizations/organization.entity.js';
import { RESERVATION_BLOCK_MAX, releaseReservations, spendReserved, type Reservation } from './credit-reservations.js';
import type { ProgramRecording } from '../../recordings/recording-settings.js';

/** A running execution and the program settings the runner needs to advance it. */
export interface RunnableExecution {
  id: string;
  programId: string;
  organizationId: string;
  maxConcurrentCalls: number;
  callingWindow: CallingWindow | null;
  retryPolicy: RetryPolicy;
  agentId: string | null;
  flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null;
  /** What the simulated caller says (null: its default lines). */
  utterances: string[] | null;
  /** The program's recording setting (null: its calls are not recorded). */
  recording: ProgramRecording | null;
  /** Where the calls are placed, with which caller ID, through which connection at how many new calls per second. */
  carrier: ProgramCarrier;
  fromNumber: string | null;
  connectionId: string | null;
  callsPerSecond: number | null;
}

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

interface ExecutionRow {
  id: string;
  program_id: string;
  organization_id: string;
  max_concurrent_calls: number;
  calling_window: CallingWindow | null;
  retry_policy: RetryPolicy;
  agent_id: string | null;
  simulated_caller: { utterances: string[] } | null;
  recording: ProgramRecording | null;
  flow_nodes: FlowNode[] | null;
  flow_edges: FlowEdge[] | null;
  carrier: ProgramCarrier;
  from_number: string | null;
  connection_id: string | null;
  calls_per_second: number | null;
}

const EXECUTION_SELECT = `select e.id, e.program_id, e.organization_id, p.max_concurrent_calls, p.calling_window, p.retry_policy, p.agent_id, p.simulated_caller, p.recording,
            f.nodes as flow_nodes, f.edges as flow_edges, p.carrier, pn.number as from_number,
            case when p.carrier <> 'simulator' then cc.id end as connection_id, cc.calls_per_second
       from executions e
       join programs p on p.id = e.program_id
       left join call_flows f on f.id = coalesce(e.flow_id, p.flow_id)
       left join phone_numbers pn on pn.id = p.from_number_id
       left join carrier_connections cc on cc.id = pn.carrier_connection_id and cc.carrier = p.carrier`;

function runnable(row: ExecutionRow): RunnableExecution {
  return {
    id: row.id,
    programId: row.program_id,
    organizationId: row.organization_id,
    maxConcurrentCalls: Math.max(1, row.max_concurrent_calls),
    callingWindow: row.calling_window,
    retryPolicy: row.retry_policy,
    agentId: row.agent_id,
    utterances: row.simulated_caller?.utterances ?? null,
    recording: row.recording?.enabled ? row.recording : null,
    flow: row.flow_nodes ? { nodes: row.flow_nodes, edges: row.flow_edges ?? [] } : null,
    carrier: row.carrier,
    fromNumber: row.from_number,
    connectionId: row.connection_id,
    callsPerSecond: row.calls_per_second === null ? null : Number(row.calls_per_second),
  };
}

/** One execution with its program's settings, whatever its status (the call tracker records late calls too). */
export async function loadExecution(em: EntityManager, executionId: string): Promise<RunnableExecution | null> {
  const [row] = await query<ExecutionRow>(em, `${EXECUTION_SELECT} where e.id = ?`, [executionId]);
  return row ? runnable(row) : null;
}

/** Several executions by id, with their program's settings, in one statement. */
export async function loadExecutions(em: EntityManager, executionIds: string[]): Promise<Map<string, RunnableExecution>> {
  if (executionIds.length === 0) return new Map();
  const rows = await query<ExecutionRow>(em, `${EXECUTION_SELECT} where e.id in (${placeholders(executionIds)})`, executionIds);
  return new Map(rows.map((row) => [row.id, runnable(row)]));
}

/** Running executions with a free call slot, with their program's settings (the flow the execution started with, else the program's). */
export async function listRunnable(em: EntityManager): Promise<RunnableExecution[]> {
  const rows = await query<ExecutionRow>(
    em,
    `${EXECUTION_SELECT}
      where e.status = 'running' and e.contacts_in_progress < greatest(p.max_concurrent_calls, 1)
      order by e.id`,
  );
  return rows.map(runnable);
}

interface CandidateRow {
  id: string;
  contact_id: string | null;
  phone: string;
  time_zone: string | null;
  attempts: number;
  /**
   * Why the row fails without a call: its number is on the do-not-call list (checked by number, so
   * a contact re-imported under another id is caught too), or the contact opted out or was deleted
   * since the start.
   */
  gone: 'do_not_call' | 'opted_out' | 'contact_deleted' | null;
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
 */
export async function claimCalls(
  em: EntityManager,
  execution: RunnableExecution,
  /** `leaseClock`: the time leases are measured from; null for the database clock (see leases.ts). */
  /**
   * `reservation`: the runner pays from its credit reservation for the execution (credit-reservations.ts),
   * topped up from the organization in blocks; without it every claim takes its credits from the organization's row.
   */
  options: {
    now: Date;
    token: string;
    leaseMs: number;
    leaseClock?: Date | null;
    events: ExecutionEvents;
    reservation?: Reservation;
  },
): Promise<ClaimedCall[]> {
  let stoppedRunning = false;
  const claimed = await claimIn(em, execution, options, () => (stoppedRunning = true));
  // It completed or ran out of credits: what the runners still hold for it goes back now (else the next tick's pass does it).
  if (stoppedRunning && options.reservation) await releaseReservations(em, { executionIds: [execution.id] }).catch(() => 0); // else the tick's pass gives them back
  return claimed;
}

async function claimIn(
  em: EntityManager,
  execution: RunnableExecution,
  options: Parameters<typeof claimCalls>[2],
  stopped: () => void,
): Promise<ClaimedCall[]> {
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
    const [state] = await query<{ status: ExecutionStatus; contacts_pending: number; contacts_in_progress: number }>(
      tx,
      `select e.status, e.contacts_pending, e.contacts_in_progress
         from executions e cross join lateral (select pg_advisory_xact_lock(hashtextextended(?, 0))) as claiming
        where e.id = ?`,
      [`claim-execution:${execution.id}`, execution.id],
    );
    if (!state || state.status !== ExecutionStatus.running) return [];
    if (state.contacts_pending === 0 && state.contacts_in_progress === 0) {
      const [locked] = await query<{ status: ExecutionStatus; contacts_pending: number; contacts_in_progress: number }>(
        tx,
        'select status, contacts_pending, contacts_in_progress from executions where id = ? for update',
        [execution.id],
      );
      if (!locked || locked.status !== ExecutionStatus.running || locked.contacts_pending !== 0 || locked.contacts_in_progress !== 0) return [];
      assertMove(locked.status, ExecutionStatus.completed);
      await query(
        tx,
        `update executions set status = 'completed', actual_end_at = ?::timestamptz, updated_at = ?::timestamptz where id = ?`,
        [at(now), at(now), execution.id],
      );
      record(moved(locked.status, ExecutionStatus.completed, 'no_contacts_left'));
      stopped();
      return [];
    }
    // Full as of that read: nothing to claim (nor a carrier's pacing row to lock).
    if (state.contacts_pending === 0 || state.contacts_in_progress >= execution.maxConcurrentCalls) return [];
    // At most the execution's concurrency; the statement that picks the rows takes the calls in progress off it.
    let slots = execution.maxConcurrentCalls;
    if (execution.carrier !== ProgramCarrier.simulator) {
      // The connection was deleted, or the number moved to another carrier: nothing is placed until it is mended.
      if (!execution.connectionId) return [];
      slots = Math.min(slots, await pacingAllowance(tx, execution.connectionId, execution.callsPerSecond ?? 1, options.leaseClock ?? null));
      if (slots <= 0) return [];
    }

    const due = `ec.execution_id = ? and ec.status = 'pending' and (ec.next_attempt_at is null or ec.next_attempt_at <= ?::timestamptz)`;
    // The window is checked once per time zone, so a page of rows outside it never blocks the queue
    // (without a window every zone is open, and nothing needs checking).
    let named: string[] = [];
    let zoneClauses = ['true'];
    if (execution.callingWindow) {
      const zones = await query<{ time_zone: string | null }>(tx, `select distinct ec.time_zone from execution_contacts ec where ${due}`, [execution.id, at(now)]);
      const open = zones.map((row) => row.time_zone).filter((zone) => isWithinWindow(now, zone, execution.callingWindow));
      if (open.length === 0) return [];
      named = open.filter((zone): zone is string => zone !== null);
      zoneClauses = [
        ...(named.length ? [`ec.time_zone in (${placeholders(named)})`] : []),
        ...(open.includes(null) ? ['ec.time_zone is null'] : []),
      ];
    }
    // The do-not-call list is read here, in the statement that claims, so a number added a moment
    // ago is never dialed. So are the free slots: the execution's calls in progress as the last claim
    // of it (this runner's or another's) committed them, less nothing it holds itself. A number in a live call of the same program (another execution's, a
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
        limit least(?::int, greatest(0, ?::int - (select contacts_in_progress from executions where id = ?)))
        for update of ec skip locked`,
      [execution.id, at(now), ...named, execution.programId, slots, execution.maxConcurrentCalls, execution.id],
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
      const spent = await spendReserved(tx, options.reservation, { organizationId: execution.organizationId, executionId: execution.id, count: callable.length, block });
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
    if (taken > 0 || outOfCredits) {
      // Still running, and the calls still fit in its concurrency: else nothing of this claim happened.
      const applied = await query(
        tx,
        `update executions set contacts_pending = contacts_pending - ?, contacts_in_progress = contacts_in_progress + ?,
                contacts_failed = contacts_failed + ?, contacts_do_not_call = contacts_do_not_call + ?, credits_spent = credits_spent + ?, status = ?, updated_at = ?::timestamptz,
                outcome_counts = ${addOutcomeCounts('outcome_counts', '?::jsonb')}
          where id = ? and status = 'running' and (?::int = 0 or contacts_in_progress + ?::int <= ?) returning id`,
        [
          taken, ids.length, gone.length, suppressed.length, ids.length, outOfCredits ? ExecutionStatus.paused_no_credits : state.status, at(now),
          // The contacts not called, by why: their outcome, as the rows just written say.
          JSON.stringify(countBy(candidates.filter((row) => row.gone).map((row) => String(row.gone)))),
          execution.id, ids.length, ids.length, execution.maxConcurrentCalls,
        ],
      );
      if (applied.length === 0) throw new ClaimRaced(execution.id);
    }
    if (outOfCredits) {
      record(moved(state.status, ExecutionStatus.paused_no_credits, 'no_credits'));
      stopped();
    }
    return paid.map((row, index) => ({
      executionContactId: row.id,
      token,
      execution,
      phone: row.phone,
      timeZone: row.time_zone,
      attempt: row.attempts + 1,
      callId: callIds[index],
      contactId: row.contact_id,
    }));
  });
}

/**
 * Contacts whose number is on the do-not-call list: each gets a call record that was never placed
 * (status canceled, outcome do_not_call, no credit, no carrier, no connection, so no pacing slot)
 * and its call.ended event, in the claim's transaction. So the calls list, the calls CSV (one row
 * per contact, with its last call's outcome) and the event stream all say do_not_call, as the
 * execution's contactsDoNotCall counter does.
 */
async function suppressCalls(tx: EntityManager, execution: RunnableExecution, rows: CandidateRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map(() => randomUUID());
  await query(
    tx,
    `insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, agent_id, execution_contact_id,
                        direction, from_number, to_number, status, outcome, attempt, carrier, queued_at, ended_at, reached_node_ids, error_text, credits_charged)
     values ${rows.map(() => `(?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?, ?, 'outbound', ?, ?, 'canceled', 'do_not_call', ?, ?, ?::timestamptz, ?::timestamptz, '[]'::jsonb, ?, 0)`).join(', ')}`,
    rows.flatMap((row, index) => [
      ids[index],
      at(now),
      at(now),
      execution.organizationId,
      execution.id,
      execution.programId,
      row.contact_id,
      execution.agentId,
      row.id,
      execution.fromNumber,
      row.phone,
      row.attempts + 1,
      execution.carrier,
      at(now),
      at(now),
      'Not placed: the number is on the do-not-call list',
    ]),
  );
  const calls = await tx.find(Call, { id: { $in: ids } });
  await EventWriter.write(tx, ...calls.map((call) => ({ organizationId: execution.organizationId, type: 'call.ended' as const, payload: callJson(call) })));
}

/** The carrier's clock for pacing: the runner's injected one in tests, else the database's, read now. */
const PACING_NOW = 'coalesce(?::timestamptz, clock_timestamp())';

/**
 * How many new calls the connection may start now: its calls per second less the calls queued
 * on it in the last second. The connection's row is locked for the rest of the claim's
 * transaction, so runners in every replica take turns and together never exceed the rate.
 */
async function pacingAllowance(tx: EntityManager, connectionId: string, callsPerSecond: number, clockTime: Date | null): Promise<number> {
  await query(tx, 'select id from carrier_connections where id = ? for update', [connectionId]);
  const [recent] = await query<{ count: string | number }>(
    tx,
    `select count(*) as count from calls where carrier_connection_id = ? and queued_at > ${PACING_NOW} - interval '1 second'`,
    [connectionId, clockTime && at(clockTime)],
  );
  return callsPerSecond - Number(recent?.count ?? 0);
}

/** One call record per claimed row, queued, paid with one credit. */
async function openCalls(
  tx: EntityManager,
  execution: RunnableExecution,
  rows: CandidateRow[],
  token: string,
  clockTime: Date | null,
  now: Date,
  /** A data-modifying statement run with the insert, as its CTE (the claimed rows' update). */
  alongside: { sql: string; params: unknown[] },
): Promise<string[]> {
  const ids = rows.map(() => randomUUID());
  if (rows.length === 0) return ids;
  const values = rows.map(() => `(?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?, ?, ?, 'outbound', ?, ?, 'queued', ?, ?, ?, ${PACING_NOW}, '[]'::jsonb, 1)`);
  const params = rows.flatMap((row, index) => [
    ids[index],
    at(now),
    at(now),
    execution.organizationId,
    execution.id,
    execution.programId,
    row.contact_id,
    execution.agentId,
    row.id,
    token,
    execution.fromNumber,
    row.phone,
    row.attempts + 1,
    execution.carrier,
    execution.connectionId,
    clockTime && at(clockTime),
  ]);
  await query(
    tx,
    `with alongside as (${alongside.sql})
     insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, agent_id, execution_contact_id, claim_token,
                        direction, from_number, to_number, status, attempt, carrier, carrier_connection_id, queued_at, reached_node_ids, credits_charged)
     values ${values.join(', ')}`,
    [...alongside.params, ...params],
  );
  return ids;
}

/** How many times each value occurs. */
function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
