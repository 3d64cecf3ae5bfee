import type { EntityManager } from '@mikro-orm/postgresql';
import type { ExecutionEvents } from '../execution-events.js';
import { canMove } from '../execution-state.js';
import { ExecutionStatus } from '../program.enums.js';
import { at, placeholders, query } from './sql.js';

const STOPPABLE = Object.values(ExecutionStatus).filter((status) => canMove(status, ExecutionStatus.stopped));

interface MovedRow {
  id: string;
  program_id: string;
  organization_id: string;
  from_status: ExecutionStatus;
}

/**
 * Scheduled executions whose start time has come start running; executions that may be stopped
 * (running or paused, per the state machine) stop at their stop time. Calls in flight still get
 * recorded; nothing new is claimed. The rows are locked and read before the update, so each move
 * is recorded with the state it left.
 */
export async function advanceSchedules(em: EntityManager, now: Date, events: ExecutionEvents): Promise<{ started: number; stopped: number }> {
  return events.transaction(em, async (tx, record) => {
    const started = await query<MovedRow>(
      tx,
      `with due as (select id, status from executions where status = 'scheduled' and scheduled_start_at <= ?::timestamptz for update)
       update executions e set status = 'running', actual_start_at = ?::timestamptz, updated_at = ?::timestamptz
         from due where e.id = due.id
       returning e.id, e.program_id, e.organization_id, due.status as from_status`,
      [at(now), at(now), at(now)],
    );
    const stopped = await query<MovedRow>(
      tx,
      `with due as (select id, status from executions where status in (${placeholders(STOPPABLE)}) and scheduled_stop_at <= ?::timestamptz for update)
       update executions e set status = 'stopped', actual_end_at = ?::timestamptz, updated_at = ?::timestamptz
         from due where e.id = due.id
       returning e.id, e.program_id, e.organization_id, due.status as from_status`,
      [...STOPPABLE, at(now), at(now), at(now)],
    );
    for (const [rows, to] of [[started, ExecutionStatus.running], [stopped, ExecutionStatus.stopped]] as const) {
      for (const row of rows) {
        record({ executionId: row.id, programId: row.program_id, organizationId: row.organization_id, from: row.from_status, to, reason: 'schedule' });
      }
    }
    return { started: started.length, stopped: stopped.length };
  });
}
