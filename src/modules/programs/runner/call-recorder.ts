import type { EntityManager } from '@mikro-orm/postgresql';
import { EventWriter } from '../../events/event-writer.js';
import { executionPayload, type ExecutionEvents, type RecordTransition } from '../execution-events.js';
import { assertMove } from '../execution-state.js';
import { ExecutionContactStatus, ExecutionStatus } from '../program.enums.js';
import type { AutoPauseRule } from '../program.types.js';
import { addReached, trippedRule } from './auto-pause.js';
import { isFinalOutcome, reachesNodes, type CallResult } from './dialer.js';
import type { ClaimedCall } from './work-queue.js';
import { at, query } from './sql.js';

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
  call: Pick<ClaimedCall, 'executionContactId' | 'token' | 'attempt' | 'execution'>,
  result: CallResult,
  now: Date,
): Promise<RecordResult> {
  {
    const [row] = await query<{ status: ExecutionContactStatus; reached_node_ids: string[] | null; requeue: boolean }>(
      tx,
      `select status, reached_node_ids, requeue from execution_contacts where id = ? and claimed_by = ? and status in ('in_progress', 'pending') for update`,
      [call.executionContactId, call.token],
    );
    if (!row) return 'dropped';
    const [execution] = await query<ExecutionState>(
      tx,
      'select status, contacts_pending, contacts_in_progress, auto_pause_rules, node_counts from executions where id = ? for update',
      [call.execution.id],
    );

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
    await query(
      tx,
      `update execution_contacts set status = ?, attempts = ?, requeue = false, last_outcome = ?, reached_node_ids = ?::jsonb, claimed_by = null, lease_until = null,
              next_attempt_at = ?::timestamptz, completed_at = ?::timestamptz, updated_at = ?::timestamptz
        where id = ?`,
      [next, requeue ? 0 : call.attempt, result.outcome, JSON.stringify(reached), nextAttemptAt && at(nextAttemptAt), next === ExecutionContactStatus.pending ? null : at(now), at(now), call.executionContactId],
    );

    // The row leaves whichever count it was in.
    const wasPending = row.status === ExecutionContactStatus.pending;
    const pending = execution.contacts_pending - (wasPending ? 1 : 0) + (next === ExecutionContactStatus.pending ? 1 : 0);
    const inProgress = execution.contacts_in_progress - (wasPending ? 0 : 1);
    const nodeCounts = addReached(execution.node_counts ?? {}, firstReached);
    let status = execution.status;
    // Nothing left to call: completed, even when this last call also tripped a rule.
    if (status === ExecutionStatus.running && pending === 0 && inProgress === 0) {
      status = ExecutionStatus.completed;
    } else if (status === ExecutionStatus.running && trippedRule(execution.auto_pause_rules ?? [], nodeCounts, firstReached)) {
      status = ExecutionStatus.paused_threshold;
    }
    if (status !== execution.status) {
      assertMove(execution.status, status);
      const { id: executionId, programId, organizationId } = call.execution;
      record({ executionId, programId, organizationId, from: execution.status, to: status, reason: status === ExecutionStatus.completed ? 'no_contacts_left' : 'threshold' });
    }
    await query(
      tx,
      `update executions set contacts_in_progress = ?, contacts_pending = ?,
              contacts_completed = contacts_completed + ?, contacts_failed = contacts_failed + ?,
              node_counts = ?::jsonb, status = ?,
              actual_end_at = case when ? then ?::timestamptz else actual_end_at end, updated_at = ?::timestamptz
        where id = ?`,
      [
        inProgress,
        pending,
        next === ExecutionContactStatus.completed ? 1 : 0,
        next === ExecutionContactStatus.failed ? 1 : 0,
        JSON.stringify(nodeCounts),
        status,
        status === ExecutionStatus.completed,
        at(now),
        at(now),
        call.execution.id,
      ],
    );
    await writeProgress(tx, call.execution, now);
    return 'recorded';
  }
}

/** The least time between two execution.progress events of one execution. */
export const PROGRESS_EVENT_INTERVAL_MS = 1000;

/**
 * execution.progress (the counters, as REST shows the execution), coalesced: written only when the
 * execution's last one is at least a second old. The check is one conditional update of the row this
 * transaction already holds locked, so two recorders never both write one for the same second.
 */
async function writeProgress(tx: EntityManager, execution: Pick<ClaimedCall['execution'], 'id' | 'organizationId'>, now: Date): Promise<void> {
  const due = await query(
    tx,
    `update executions set progress_event_at = ?::timestamptz
      where id = ? and (progress_event_at is null or progress_event_at <= ?::timestamptz) returning id`,
    [at(now), execution.id, at(new Date(now.getTime() - PROGRESS_EVENT_INTERVAL_MS))],
  );
  if (due.length === 0) return;
  await EventWriter.write(tx, { organizationId: execution.organizationId, type: 'execution.progress', payload: await executionPayload(tx, execution.id) });
}
