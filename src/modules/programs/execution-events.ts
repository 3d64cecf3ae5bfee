import type { EntityManager } from '@mikro-orm/postgresql';
import { pino, type Logger } from 'pino';
import { ExecutionStatus as S } from './program.enums.js';

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
  if (from === null) return to === S.scheduled ? 'created' : 'opened';
  if (to === S.running) return from === S.scheduled ? 'started' : 'resumed';
  if (to === S.paused || to === S.paused_no_credits || to === S.paused_threshold) return 'paused';
  return to; // completed, stopped, cancelled
}

/** Records one transition inside the transaction that makes it. */
export type RecordTransition = (transition: ExecutionTransition) => void;

/**
 * The single seam for "an execution changed state": every move — by a user, the schedule, the
 * work queue, the call recorder or a live trigger — is made inside `transaction`, which hands the
 * work a `record` function. What is recorded is written in that same transaction (today nothing:
 * a later issue adds the outbox row in `write`) and logged at info, one line per transition, only
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
  private async write(_tx: EntityManager, _transitions: readonly ExecutionTransition[]): Promise<void> {}

  private log(transition: ExecutionTransition): void {
    const { executionId, programId, organizationId, from, to, reason } = transition;
    this.logger.info(
      { executionId, programId, organizationId, from, to, reason },
      `execution ${verb(transition)}: ${from ?? 'new'} → ${to} (${reason})`,
    );
  }
}
