import type { EntityManager } from '@mikro-orm/postgresql';
import type { ExecutionEvents } from '../execution-events.js';
import { canMove } from '../execution-state.js';
import { ExecutionStatus } from '../program.enums.js';
import { at, placeholders, query } from '../../../db/sql.js';
import { lockProgramRuns } from '../execution.service.js';

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
    // A program runs one execution at a time: of its due executions the earliest starts, and none
    // while another of the program runs (they wait, still scheduled, for it to end).
    const due = await query<{ id: string; program_id: string }>(
      tx,
      `select x.id, x.program_id from executions x
        where x.status = 'scheduled' and x.scheduled_start_at <= ?::timestamptz
          and not exists (select 1 from executions r where r.program_id = x.program_id and r.status = 'running')
        order by x.program_id, x.scheduled_start_at, x.created_at, x.id`,
      [at(now)],
    );
    const first = new Map<string, string>();
    for (const row of due) if (!first.has(row.program_id)) first.set(row.program_id, row.id);
    const started: MovedRow[] = [];
    for (const [programId, executionId] of first) {
      await lockProgramRuns(tx, programId);
      started.push(
        ...(await query<MovedRow>(
          tx,
          `update executions e set status = 'running', actual_start_at = ?::timestamptz, updated_at = ?::timestamptz
            where e.id = ? and e.status = 'scheduled'
              and not exists (select 1 from executions r where r.program_id = e.program_id and r.status = 'running')
          returning e.id, e.program_id, e.organization_id, 'scheduled' as from_status`,
          [at(now), at(now), executionId],
        )),
      );
    }
    const stopped = await query<MovedRow>(
      tx,
      `with due as (select id, status from executions where status in (${placeholders(STOPPABLE)}) and scheduled_stop_at <= ?::timestamptz for update)
       update executions e set status = 'stopped', actual_end_at = ?::timestamptz, updated_at = ?::timestamptz
         from due where e.id = due.id
       returning e.id, e.program_id, e.organization_id, due.status as from_status`,
      [...STOPPABLE, at(now), at(now), at(now)],
    );
    for (const [rows, to] of [
      [started, ExecutionStatus.running],
      [stopped, ExecutionStatus.stopped],
    ] as const) {
      for (const row of rows) {
        record({ executionId: row.id, programId: row.program_id, organizationId: row.organization_id, from: row.from_status, to, reason: 'schedule' });
      }
    }
    return { started: started.length, stopped: stopped.length };
  });
}
