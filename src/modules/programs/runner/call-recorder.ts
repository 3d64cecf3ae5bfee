import type { EntityManager } from '@mikro-orm/postgresql';
import { assertMove } from '../execution-state.js';
import { ExecutionContactStatus, ExecutionStatus } from '../program.enums.js';
import type { AutoPauseRule } from '../program.types.js';
import { addReached, trippedRule } from './auto-pause.js';
import { isFinalOutcome, type CallResult } from './dialer.js';
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
 * execution's status. The row must still carry this claim's token; if its lease was taken over
 * the result is dropped, so no call is ever counted twice. Calls of an execution paused or
 * stopped meanwhile are still recorded (the call happened); only a running execution pauses
 * on a threshold or completes.
 */
export async function recordCall(em: EntityManager, call: ClaimedCall, result: CallResult, now: Date): Promise<RecordResult> {
  return em.transactional(async (tx) => {
    const [row] = await query<{ attempts: number }>(
      tx,
      `select attempts from execution_contacts where id = ? and claimed_by = ? and status = 'in_progress' for update`,
      [call.executionContactId, call.token],
    );
    if (!row) return 'dropped';
    const [execution] = await query<ExecutionState>(
      tx,
      'select status, contacts_pending, contacts_in_progress, auto_pause_rules, node_counts from executions where id = ? for update',
      [call.execution.id],
    );

    const { maxAttempts, retryDelayMinutes } = call.execution.retryPolicy;
    const retry = !isFinalOutcome(result.outcome) && row.attempts < maxAttempts;
    const next = isFinalOutcome(result.outcome) ? ExecutionContactStatus.completed : retry ? ExecutionContactStatus.pending : ExecutionContactStatus.failed;
    const nextAttemptAt = retry ? new Date(now.getTime() + retryDelayMinutes * 60_000) : null;
    await query(
      tx,
      `update execution_contacts set status = ?, last_outcome = ?, reached_node_ids = ?::jsonb, claimed_by = null, lease_until = null,
              next_attempt_at = ?::timestamptz, completed_at = ?::timestamptz, updated_at = ?::timestamptz
        where id = ?`,
      [next, result.outcome, JSON.stringify(result.reachedNodeIds), nextAttemptAt && at(nextAttemptAt), retry ? null : at(now), at(now), call.executionContactId],
    );

    const pending = execution.contacts_pending + (retry ? 1 : 0);
    const inProgress = execution.contacts_in_progress - 1;
    const nodeCounts = addReached(execution.node_counts ?? {}, result.reachedNodeIds);
    let status = execution.status;
    // Nothing left to call: completed, even when this last call also tripped a rule.
    if (status === ExecutionStatus.running && pending === 0 && inProgress === 0) {
      status = ExecutionStatus.completed;
    } else if (status === ExecutionStatus.running && trippedRule(execution.auto_pause_rules ?? [], nodeCounts, result.reachedNodeIds)) {
      status = ExecutionStatus.paused_threshold;
    }
    if (status !== execution.status) assertMove(execution.status, status);
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
    return 'recorded';
  });
}
