import type { EntityManager } from '@mikro-orm/postgresql';
import { pino, type Logger } from 'pino';
import { EventWriter } from '../events/event-writer.js';
import type { EventType } from '../events/event.types.js';
import { Execution } from './execution.entity.js';
import { ExecutionStatus as S } from './program.enums.js';
import { executionJson } from './programs.types.js';
import { query } from '../../db/sql.js';

/** Why an execution changed state. */
export type TransitionReason =
  /** A user asked (REST POST /api/executions/{id}/<action>, GraphQL mutations). */
  | 'user'
  /** Its scheduledStartAt or scheduledStopAt came. */
  | 'schedule'
  /** The organization's credits ran out. */
  | 'no_credits'
  /** An auto-pause rule's node count reached its threshold. */
  | 'threshold'
  /** No contact is left to call. */
  | 'no_contacts_left'
  /** Its audience was all copied into its work queue (preparing → scheduled). */
  | 'snapshot'
  /** A live program's trigger fired with no open execution, so a new one was opened. */
  | 'trigger';

export interface ExecutionTransition {
  executionId: string;
  programId: string;
  organizationId: string;
  /** null when the execution was just created in `to`. */
  from: S | null;
  to: S;
  reason: TransitionReason;
}

/** The one line each transition logs, by kind of move. */
function verb(transition: ExecutionTransition): string {
  const { from, to } = transition;
  if (from === null) return to === S.scheduled || to === S.preparing ? 'created' : 'opened';
  if (from === S.preparing && to === S.scheduled) return 'prepared';
  if (to === S.running) return from === S.scheduled ? 'started' : 'resumed';
  if (to === S.paused || to === S.paused_no_credits || to === S.paused_threshold) return 'paused';
  return to; // completed, stopped, cancelled
}

/** The event type of a transition: a new execution (preparing, scheduled, or opened running by a trigger) is `execution.created`; its snapshot done is `execution.progress`. */
export function eventTypeOf(transition: ExecutionTransition): EventType {
  const { from, to } = transition;
  if (from === null) return 'execution.created';
  if (from === S.preparing && to === S.scheduled) return 'execution.progress';
  if (to === S.running) return from === S.scheduled ? 'execution.started' : 'execution.resumed';
  if (to === S.paused || to === S.paused_no_credits || to === S.paused_threshold) return 'execution.paused';
  return `execution.${to}` as EventType; // completed, stopped, cancelled
}

/** The execution as REST shows it now, inside the transaction (pending ORM changes flushed, raw SQL updates re-read). */
export async function executionPayload(tx: EntityManager, executionId: string): Promise<Record<string, unknown>> {
  await tx.flush();
  return executionJson(await tx.findOneOrFail(Execution, executionId, { refresh: true }));
}

/** Records one transition inside the transaction that makes it. */
export type RecordTransition = (transition: ExecutionTransition) => void;

/**
 * The single seam for "an execution changed state": every move — by a user, the schedule, the
 * work queue, the call recorder or a live trigger — is made inside `transaction`, which hands the
 * work a `record` function. What is recorded is written in that same transaction as an event
 * (execution.created, started, …: the execution as REST shows it after the move, with from, to and
 * reason), always — there is no way to build one that writes nothing — and logged at info, one line per transition, only
 * once the transaction has committed, so a rolled-back move is never announced.
 */
export class ExecutionEvents {
  private readonly logger: Logger;

  constructor(logger?: Logger) {
    this.logger = (logger ?? pino({ level: 'silent' })).child({ component: 'executions' });
  }

  async transaction<T>(em: EntityManager, work: (tx: EntityManager, record: RecordTransition) => Promise<T>): Promise<T> {
    const transitions: ExecutionTransition[] = [];
    const result = await em.transactional(async (tx) => {
      transitions.length = 0; // a retried callback starts over
      const value = await work(tx, (transition) => transitions.push(transition));
      await this.write(tx, transitions);
      return value;
    });
    for (const transition of transitions) this.log(transition);
    return result;
  }

  /** The transactional outbox's place: rows written here commit or roll back with the move. */
  private async write(tx: EntityManager, transitions: readonly ExecutionTransition[]): Promise<void> {
    for (const transition of transitions) {
      const { executionId, organizationId, from, to, reason } = transition;
      // A move ends whatever the runner was waiting for: a resumed execution is looked at afresh.
      await query(tx, 'update executions set runner_waiting_reason = null, runner_next_call_at = null where id = ? and runner_waiting_reason is not null', [
        executionId,
      ]);
      const payload = { ...(await executionPayload(tx, executionId)), from, to, reason };
      await EventWriter.write(tx, { organizationId, type: eventTypeOf(transition), payload });
    }
  }

  private log(transition: ExecutionTransition): void {
    const { executionId, programId, organizationId, from, to, reason } = transition;
    this.logger.info({ executionId, programId, organizationId, from, to, reason }, `execution ${verb(transition)}: ${from ?? 'new'} → ${to} (${reason})`);
  }
}
