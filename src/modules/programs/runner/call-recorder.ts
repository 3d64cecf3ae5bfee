import type { EntityManager } from '@mikro-orm/postgresql';
import { EventWriter } from '../../events/event-writer.js';
import { executionPayload, type ExecutionEvents, type RecordTransition } from '../execution-events.js';
import { assertMove } from '../execution-state.js';
import { ExecutionContactStatus, ExecutionStatus } from '../program.enums.js';
import type { AutoPauseRule } from '../program.types.js';
import { addReached, trippedRule } from './auto-pause.js';
import { isFinalOutcome, reachesNodes, type CallResult } from './dialer.js';
import type { ClaimedCall } from './work-queue.js';
import { at, placeholders, query } from '../../../db/sql.js';
import { addOutcomeCounts } from '../execution-outcomes.js';

interface ExecutionState {
  status: ExecutionStatus;
  contacts_pending: number;
  contacts_in_progress: number;
  auto_pause_rules: AutoPauseRule[];
  node_counts: Record<string, number>;
}

export type RecordResult = 'recorded' | 'dropped';

/**
 * Records one call in one transaction: the row, the counters, the node counts, and the
 * execution's status. The row must still carry this claim's token: in progress, or pending when
 * its lease expired and nobody claimed it again (the call did happen: it is recorded, so the
 * contact is not dialed and paid for twice). Once another claim took the row the result is
 * dropped, so no call is ever counted twice. Calls of an execution paused or
 * stopped meanwhile are still recorded (the call happened); only a running execution pauses
 * on a threshold or completes.
 */
export async function recordCall(em: EntityManager, call: ClaimedCall, result: CallResult, now: Date, events: ExecutionEvents): Promise<RecordResult> {
  return events.transaction(em, (tx, record) => recordCallIn(tx, record, call, result, now));
}

/** recordCall inside a transaction the caller holds (the call tracker's, which moves the call row with it). */
export async function recordCallIn(
  tx: EntityManager,
  record: RecordTransition,
  call: CallToRecord['claim'],
  result: CallResult,
  now: Date,
): Promise<RecordResult> {
  const [recorded] = await recordCallsIn(tx, record, [{ claim: call, result }], now);
  return recorded!;
}

export interface CallToRecord {
  claim: Pick<ClaimedCall, 'executionContactId' | 'token' | 'attempt' | 'execution'>;
  result: CallResult;
}

interface ContactState {
  id: string;
  status: ExecutionContactStatus;
  reached_node_ids: string[] | null;
  requeue: boolean;
  claimed_by: string | null;
}

interface ExecutionRowState extends ExecutionState {
  id: string;
  progress_event_at: Date | string | null;
  contacts_completed_delta: number;
  contacts_failed_delta: number;
  outcomes_delta: Record<string, number>;
  ended: boolean;
  touched: boolean;
}

/**
 * Records a batch of ended calls in the caller's transaction, in order, with as many statements as
 * a single call takes: their contacts' rows are locked (id order) and updated together, then, last,
 * each execution's row is locked (id order) and its counters, node counts and status written once
 * for the whole batch. Each call is decided exactly as alone: the row must still carry its claim's
 * token; a running execution completes or pauses on a threshold at the call that makes it so, and
 * the calls after it in the batch are still recorded (the calls happened). execution.progress is
 * written at most once a second per execution, with the counters after the batch.
 */
export async function recordCallsIn(tx: EntityManager, record: RecordTransition, calls: CallToRecord[], now: Date): Promise<RecordResult[]> {
  if (calls.length === 0) return [];
  const contactIds = [...new Set(calls.map((call) => call.claim.executionContactId))].sort();
  const contacts = await query<ContactState>(
    tx,
    `select id, status, reached_node_ids, requeue, claimed_by from execution_contacts where id in (${placeholders(contactIds)}) order by id for no key update`,
    contactIds,
  );
  const contactById = new Map(contacts.map((row) => [row.id, row]));
  const holds = (call: CallToRecord) => {
    const row = contactById.get(call.claim.executionContactId);
    return row && row.claimed_by === call.claim.token && (row.status === ExecutionContactStatus.in_progress || row.status === ExecutionContactStatus.pending);
  };
  const updates: Record<string, unknown>[] = [];
  const counted: { call: CallToRecord['claim']; wasPending: boolean; next: ExecutionContactStatus; firstReached: string[]; outcome: string }[] = [];

  // The contacts first: what each call makes of its row does not depend on the execution's counters.
  const results = calls.map((toRecord): RecordResult => {
    const { claim: call, result } = toRecord;
    const row = contactById.get(call.executionContactId);
    if (!row || !holds(toRecord)) return 'dropped';
    const { maxAttempts, retryDelayMinutes } = call.execution.retryPolicy;
    // The claim's attempt: recovery took it back from a row that went pending, and this call made it.
    const retry = !isFinalOutcome(result.outcome) && call.attempt < maxAttempts;
    // A live trigger fired for a new date meanwhile: the row is queued again, its attempts starting over.
    const requeue = row.requeue;
    const next = requeue
      ? ExecutionContactStatus.pending
      : isFinalOutcome(result.outcome)
        ? ExecutionContactStatus.completed
        : retry
          ? ExecutionContactStatus.pending
          : ExecutionContactStatus.failed;
    // Auto-pause counts contacts: a node counts once per contact, the first time any of its calls reaches it.
    const before = row.reached_node_ids ?? [];
    // The rule holds whatever the dialer reports: a call that did not connect reached no node.
    const reportedNodes = reachesNodes(result.outcome) ? result.reachedNodeIds : [];
    const firstReached = [...new Set(reportedNodes)].filter((nodeId) => !before.includes(nodeId));
    const reached = [...before, ...firstReached];
    const nextAttemptAt = retry && !requeue ? new Date(now.getTime() + retryDelayMinutes * 60_000) : null;
    updates.push({
      id: call.executionContactId,
      status: next,
      attempts: requeue ? 0 : call.attempt,
      last_outcome: result.outcome,
      reached_node_ids: reached,
      next_attempt_at: nextAttemptAt && at(nextAttemptAt),
      completed_at: next === ExecutionContactStatus.pending ? null : at(now),
    });
    // The row leaves whichever count it was in; a later call of the same row in this batch is dropped.
    counted.push({ call, wasPending: row.status === ExecutionContactStatus.pending, next, firstReached, outcome: result.outcome });
    row.status = next;
    row.claimed_by = null;
    row.reached_node_ids = reached;
    row.requeue = false;
    return 'recorded';
  });
  if (updates.length === 0) return results;

  await query(
    tx,
    `update execution_contacts ec set status = v.status, attempts = v.attempts, requeue = false, last_outcome = v.last_outcome,
            reached_node_ids = v.reached_node_ids, claimed_by = null, lease_until = null, next_attempt_at = v.next_attempt_at,
            completed_at = v.completed_at, updated_at = ?::timestamptz
       from jsonb_to_recordset(?::jsonb) as v(id uuid, status text, attempts int, last_outcome text, reached_node_ids jsonb,
            next_attempt_at timestamptz, completed_at timestamptz)
      where ec.id = v.id`,
    [at(now), JSON.stringify(updates)],
  );

  // Then the executions, locked last and held for as few statements as possible (the row every
  // claim and control move locks too): each counted call moves its execution in order, as alone.
  const executionIds = [...new Set(counted.map(({ call }) => call.execution.id))].sort();
  const executions = await query<ExecutionRowState>(
    tx,
    `select id, status, contacts_pending, contacts_in_progress, auto_pause_rules, node_counts, progress_event_at
       from executions where id in (${placeholders(executionIds)}) order by id for no key update`,
    executionIds,
  );
  const executionById = new Map(
    executions.map((row) => [
      row.id,
      { ...row, contacts_completed_delta: 0, contacts_failed_delta: 0, outcomes_delta: {} as Record<string, number>, ended: false, touched: false },
    ]),
  );
  for (const { call, wasPending, next, firstReached, outcome } of counted) {
    const execution = executionById.get(call.execution.id);
    if (!execution) continue;
    execution.touched = true;
    execution.contacts_pending = execution.contacts_pending - (wasPending ? 1 : 0) + (next === ExecutionContactStatus.pending ? 1 : 0);
    execution.contacts_in_progress = execution.contacts_in_progress - (wasPending ? 0 : 1);
    if (next === ExecutionContactStatus.completed) execution.contacts_completed_delta++;
    if (next === ExecutionContactStatus.failed) execution.contacts_failed_delta++;
    // A contact that is done counts by its last call's outcome.
    if (next !== ExecutionContactStatus.pending) execution.outcomes_delta[outcome] = (execution.outcomes_delta[outcome] ?? 0) + 1;
    execution.node_counts = addReached(execution.node_counts ?? {}, firstReached);
    const from = execution.status;
    // Nothing left to call: completed, even when this last call also tripped a rule.
    if (from === ExecutionStatus.running && execution.contacts_pending === 0 && execution.contacts_in_progress === 0) {
      execution.status = ExecutionStatus.completed;
      execution.ended = true;
    } else if (from === ExecutionStatus.running && trippedRule(execution.auto_pause_rules ?? [], execution.node_counts, firstReached)) {
      execution.status = ExecutionStatus.paused_threshold;
    }
    if (execution.status !== from) {
      assertMove(from, execution.status);
      const { id: executionId, programId, organizationId } = call.execution;
      record({
        executionId,
        programId,
        organizationId,
        from,
        to: execution.status,
        reason: execution.status === ExecutionStatus.completed ? 'no_contacts_left' : 'threshold',
      });
    }
  }

  // execution.progress, coalesced: due when the execution's last one is at least a second old (decided under the row's lock).
  const cutoff = now.getTime() - PROGRESS_EVENT_INTERVAL_MS;
  const touched = [...executionById.values()].filter((execution) => execution.touched);
  const due = touched.filter((execution) => execution.progress_event_at === null || new Date(execution.progress_event_at).getTime() <= cutoff);
  await query(
    tx,
    `update executions e set contacts_in_progress = v.in_progress, contacts_pending = v.pending,
            contacts_completed = e.contacts_completed + v.completed, contacts_failed = e.contacts_failed + v.failed,
            outcome_counts = ${addOutcomeCounts('e.outcome_counts', 'v.outcomes')},
            node_counts = v.node_counts, status = v.status,
            actual_end_at = case when v.ended then ?::timestamptz else e.actual_end_at end,
            progress_event_at = case when v.progress then ?::timestamptz else e.progress_event_at end, updated_at = ?::timestamptz
       from jsonb_to_recordset(?::jsonb) as v(id uuid, in_progress int, pending int, completed int, failed int, outcomes jsonb, node_counts jsonb, status text, ended boolean, progress boolean)
      where e.id = v.id`,
    [
      at(now),
      at(now),
      at(now),
      JSON.stringify(
        touched.map((execution) => ({
          id: execution.id,
          in_progress: execution.contacts_in_progress,
          pending: execution.contacts_pending,
          completed: execution.contacts_completed_delta,
          failed: execution.contacts_failed_delta,
          outcomes: execution.outcomes_delta,
          node_counts: execution.node_counts ?? {},
          status: execution.status,
          ended: execution.ended,
          progress: due.includes(execution),
        })),
      ),
    ],
  );
  for (const execution of due) {
    const organizationId = calls.find((call) => call.claim.execution.id === execution.id)!.claim.execution.organizationId;
    await EventWriter.write(tx, { organizationId, type: 'execution.progress', payload: await executionPayload(tx, execution.id) });
  }
  return results;
}

/** The least time between two execution.progress events of one execution. */
export const PROGRESS_EVENT_INTERVAL_MS = 1000;
