import type { EntityManager } from '@mikro-orm/postgresql';
import { canMove } from '../execution-state.js';
import { ExecutionStatus } from '../program.enums.js';
import { at, placeholders, query } from './sql.js';

const STOPPABLE = Object.values(ExecutionStatus).filter((status) => canMove(status, ExecutionStatus.stopped));

/**
 * Scheduled executions whose start time has come start running; executions that may be stopped
 * (running or paused, per the state machine) stop at their stop time. Calls in flight still get
 * recorded; nothing new is claimed.
 */
export async function advanceSchedules(em: EntityManager, now: Date): Promise<{ started: number; stopped: number }> {
  const started = await query(
    em,
    `update executions set status = 'running', actual_start_at = ?::timestamptz, updated_at = ?::timestamptz
      where status = 'scheduled' and scheduled_start_at <= ?::timestamptz returning id`,
    [at(now), at(now), at(now)],
  );
  const stopped = await query(
    em,
    `update executions set status = 'stopped', actual_end_at = ?::timestamptz, updated_at = ?::timestamptz
      where status in (${placeholders(STOPPABLE)}) and scheduled_stop_at <= ?::timestamptz returning id`,
    [at(now), at(now), ...STOPPABLE, at(now)],
  );
  return { started: started.length, stopped: stopped.length };
}
