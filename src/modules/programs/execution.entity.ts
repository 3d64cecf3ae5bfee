import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { ExecutionStatus, WaitingReason } from './program.enums.js';
import { Program } from './program.entity.js';
import { AutoPauseRule } from './program.types.js';
import { ExecutionOutcomes, outcomesOf, outcomesSql } from './execution-outcomes.js';
import { computedFieldSql, derivedFields, isoDateSql } from '../../db/read-model.js';
import { waitingOf } from './runner/waiting.js';
import { waitingSql } from './execution-waiting.js';

/**
 * One run of a program. The four counters always add up to totalContacts: they move in the
 * same transaction as the execution_contacts rows they count.
 */
@ObjectType({ description: 'A run of a program over its contacts' })
@Entity({ tableName: 'executions' })
export class Execution extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @ManyToOne(() => Program, { deleteRule: 'cascade' })
  program!: Program;

  @Field(() => ID)
  get programId(): string & Opt {
    return this.program.id;
  }

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  audienceId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  flowId: (string & Opt) | null = null;

  @Field(() => ExecutionStatus)
  @Enum({ items: () => ExecutionStatus, default: ExecutionStatus.scheduled })
  @Index()
  status: ExecutionStatus & Opt = ExecutionStatus.scheduled;

  /** While preparing: the last contact (by id) copied into its work queue; the runner copies from the next. */
  @Property({ type: 'uuid', nullable: true, hidden: true }) snapshotAfter: (string & Opt) | null = null;

  @Field(() => Int) @Property({ type: 'integer', default: 0 }) totalContacts: number & Opt = 0;
  @Field(() => Int) @Property({ type: 'integer', default: 0 }) contactsCompleted: number & Opt = 0;
  @Field(() => Int) @Property({ type: 'integer', default: 0 }) contactsFailed: number & Opt = 0;
  @Field(() => Int) @Property({ type: 'integer', default: 0 }) contactsPending: number & Opt = 0;
  @Field(() => Int) @Property({ type: 'integer', default: 0 }) contactsInProgress: number & Opt = 0;
  /** Of contactsFailed, those not called because their number was on the do-not-call list when the call was to be placed. */
  @Field(() => Int) @Property({ type: 'integer', default: 0 }) contactsDoNotCall: number & Opt = 0;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  scheduledStartAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  scheduledStopAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  actualStartAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  actualEndAt: (Date & Opt) | null = null;

  @Field(() => GraphQLJSONObject, {
    description: 'Values of the agents’ variables, the same for every contact (a contact’s attribute of the same name comes first)',
  })
  @Property({ type: 'json', default: '{}' })
  variables: Record<string, string> & Opt = {};

  @Field(() => [AutoPauseRule])
  @Property({ type: 'json' })
  autoPauseRules: AutoPauseRule[] & Opt = [];

  /** Finished contacts by the outcome of their last call (or why they were not called): what `outcomes` shows. */
  @Property({ type: 'json', default: '{}' })
  outcomeCounts: Record<string, number> & Opt = {};

  @Field(() => ExecutionOutcomes, { description: 'Finished contacts by outcome: what happened to each, not only completed or failed' })
  get outcomes(): ExecutionOutcomes & Opt {
    return outcomesOf(this.outcomeCounts);
  }

  /** Contacts that reached each node since the count last started (a resume with resetOnResume restarts it). */
  @Property({ type: 'json' })
  nodeCounts: Record<string, number> & Opt = {};

  @Field(() => Int, { description: 'Credits this execution has spent on calls' })
  @Property({ type: 'integer', default: 0 })
  creditsSpent: number & Opt = 0;

  /** What the campaign runner found on its last look at the running execution (waiting.ts); cleared by every move. */
  @Enum({ items: () => WaitingReason, nullable: true })
  runnerWaitingReason: (WaitingReason & Opt) | null = null;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  runnerNextCallAt: (Date & Opt) | null = null;

  @Field(() => WaitingReason, {
    nullable: true,
    description:
      'Why no (more) calls are placed now: for a running execution what the campaign runner found on its last look, for a paused or scheduled one its status; null while nothing holds its pending contacts back, and once final',
  })
  get waitingReason(): (WaitingReason & Opt) | null {
    return waitingOf(this.status, { reason: this.runnerWaitingReason, nextCallAt: this.runnerNextCallAt }, this.scheduledStartAt).reason;
  }

  @Field(() => Date, {
    nullable: true,
    description:
      'When the next call can be placed, where that is known (a calling window’s opening, a retry’s due time, a scheduled start); null with waitingReason null',
  })
  get nextCallAt(): (Date & Opt) | null {
    return waitingOf(this.status, { reason: this.runnerWaitingReason, nextCallAt: this.runnerNextCallAt }, this.scheduledStartAt).nextCallAt;
  }

  /** When its last execution.progress event was written: at most one a second (the events outbox). */
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  progressEventAt: (Date & Opt) | null = null;
}

// `outcomes` when the database writes the answer as JSON; the waiting fields from what they read.
computedFieldSql(Execution, {
  outcomes: (alias) => outcomesSql(`${alias}.outcome_counts`),
  waitingReason: (alias) => waitingSql(alias).reason,
  nextCallAt: (alias) => isoDateSql(waitingSql(alias).nextCallAt),
});
derivedFields(Execution, {
  waitingReason: ['status', 'runnerWaitingReason'],
  nextCallAt: ['status', 'runnerWaitingReason', 'runnerNextCallAt', 'scheduledStartAt'],
});
