import type { EntityManager } from '@mikro-orm/postgresql';
import { EventWriter } from '../../events/event-writer.js';
import { executionPayload } from '../execution-events.js';
import { WaitingReason } from '../program.enums.js';
import { at, query } from '../../../db/sql.js';
import type { RunnableExecution } from './runnable-execution.js';
import { sameWaiting, type PendingZone, type Waiting } from './waiting.js';

// What a claim (work-queue.ts) says about the pending contacts it left: read from the rows, and
// written on the execution when it changed.

/** The last_outcome of a pending row whose call the carrier never took (execution-call-sink.ts writes it). */
export const NOT_PLACED = 'not_placed';

export const CONCURRENCY_LIMIT: Waiting = { reason: WaitingReason.concurrency_limit, nextCallAt: null };

/**
 * The pending rows of an execution by time zone, in one statement: whether one is due now and free to
 * call, whether one is due but its number is on a live call of the program (the claim's own test),
 * and the earliest retry still ahead.
 */
export async function pendingZones(tx: EntityManager, execution: Pick<RunnableExecution, 'id' | 'programId'>, now: Date): Promise<PendingZone[]> {
  const rows = await query<{
    time_zone: string | null;
    due_now: boolean;
    due_busy: boolean;
    next_due_at: Date | string | null;
    next_not_placed_at: Date | string | null;
  }>(
    tx,
    `select z.time_zone, bool_or(z.due and not z.busy) as due_now, bool_or(z.due and z.busy) as due_busy,
            min(z.next_attempt_at) filter (where not z.due) as next_due_at,
            min(z.next_attempt_at) filter (where not z.due and z.last_outcome = '${NOT_PLACED}') as next_not_placed_at
       from (select ec.time_zone, ec.next_attempt_at, ec.last_outcome,
                    (ec.next_attempt_at is null or ec.next_attempt_at <= ?::timestamptz) as due, live.to_number is not null as busy
               from execution_contacts ec
               left join (select distinct l.to_number from calls l where l.program_id = ? and l.direction = 'outbound'
                                                                    and l.status in ('queued', 'ringing', 'in_progress')) live on live.to_number = ec.phone
              where ec.execution_id = ? and ec.status = 'pending') z
      group by z.time_zone`,
    [at(now), execution.programId, execution.id],
  );
  return rows.map((row) => {
    const nextDueAt = row.next_due_at === null ? null : new Date(row.next_due_at);
    const notPlaced = row.next_not_placed_at === null ? null : new Date(row.next_not_placed_at);
    return {
      timeZone: row.time_zone,
      dueNow: Boolean(row.due_now),
      dueBusy: Boolean(row.due_busy),
      nextDueAt,
      nextDueNotPlaced: Boolean(nextDueAt && notPlaced && notPlaced.getTime() === nextDueAt.getTime()),
    };
  });
}

/**
 * Writes what the claim found, in its transaction, when it differs from what the execution says,
 * with an execution.progress event showing it: always, since a finding may be the last news of an
 * execution for hours, and apart from the recorded calls' events (coalesced to one a second, their
 * clock untouched). Answers the new finding then, undefined when unchanged.
 */
export async function noteWaiting(
  tx: EntityManager,
  execution: RunnableExecution,
  /** The execution's columns as the claim read them. */
  state: { runner_waiting_reason: WaitingReason | null; runner_next_call_at: Date | string | null },
  waiting: Waiting | null,
  now: Date,
): Promise<Waiting | null | undefined> {
  const stored = state.runner_waiting_reason
    ? { reason: state.runner_waiting_reason, nextCallAt: state.runner_next_call_at === null ? null : new Date(state.runner_next_call_at) }
    : null;
  if (sameWaiting(stored, waiting)) return undefined;
  const written = await query(
    tx,
    `update executions set runner_waiting_reason = ?, runner_next_call_at = ?::timestamptz, updated_at = ?::timestamptz
      where id = ? and status = 'running' returning id`,
    [waiting?.reason ?? null, waiting?.nextCallAt ? at(waiting.nextCallAt) : null, at(now), execution.id],
  );
  if (written.length === 0) return undefined;
  await EventWriter.write(tx, { organizationId: execution.organizationId, type: 'execution.progress', payload: await executionPayload(tx, execution.id) });
  // A new reason is announced; the same reason with another next call time is not.
  return waiting?.reason === stored?.reason ? undefined : waiting;
}
