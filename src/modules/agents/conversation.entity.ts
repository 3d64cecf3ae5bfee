import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Agent } from './agent.entity.js';
import { ConversationStatus } from './agent.enums.js';
import { CriterionOutcome } from './agent.types.js';
import { CallAnalysis, type StoredAnalysis } from './analysis/analysis.types.js';
import type { CallContext } from './templates/call-context.js';
import { ConversationContext } from './templates/call-context.types.js';

@ObjectType({ description: 'A conversation with an agent' })
@Entity({ tableName: 'conversations' })
export class Conversation extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Agent, { deleteRule: 'cascade' })
  agent!: Agent;

  @Field(() => ConversationStatus)
  @Enum({ items: () => ConversationStatus, default: ConversationStatus.pending })
  status: ConversationStatus & Opt = ConversationStatus.pending;

  @Field(() => String, { nullable: true })
  @Property({ length: 255, nullable: true })
  title: (string & Opt) | null = null;

  @Field(() => [CriterionOutcome], { nullable: true, description: 'Set when the conversation ends' })
  @Property({ type: 'json', nullable: true })
  outcome: (CriterionOutcome[] & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  endedAt: (Date & Opt) | null = null;

  /** The phone call the conversation was spoken on (voice); null for a typed conversation. */
  @Field(() => ID, { nullable: true, description: 'The phone call this conversation was spoken on' })
  @Property({ type: 'uuid', nullable: true })
  @Index()
  callId: (string & Opt) | null = null;

  @Field(() => CallAnalysis, {
    nullable: true,
    description: 'A call’s conversation whose agent has an analysis plan: the summary and fields, pending until the model has filled them; null otherwise',
  })
  @Property({ type: 'json', nullable: true })
  analysis: (StoredAnalysis & Opt) | null = null;

  /** When the analysis is due (set as the call ends), or the end of the claim a worker holds on it; null once recorded. */
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true, hidden: true })
  analysisDueAt: (Date & Opt) | null = null;

  /** How many times a worker has claimed the analysis without recording it (analysis-worker.ts fails it past a bound). */
  @Property({ type: 'integer', default: 0, hidden: true })
  analysisAttempts: number & Opt = 0;

  /** What its agent's templates were rendered from (the values, not the rendered prompt); null for one started before templates. */
  @Field(() => ConversationContext, {
    nullable: true,
    description:
      'What the agent knew: the call, the contact, the program and the variables its templates were rendered from; null for a conversation started before agents had templates',
  })
  @Property({ type: 'json', nullable: true })
  context: (CallContext & Opt) | null = null;

  @Field(() => Int)
  @Property({ type: 'integer', default: 0 })
  messageCount: number & Opt = 0;

  @Field(() => Int, { description: 'How many tools the agent called in it (Conversation.toolCalls, GET /api/conversations/{id}/tool-calls)' })
  @Property({ type: 'integer', default: 0 })
  toolCallCount: number & Opt = 0;

  @Field(() => ID)
  get agentId(): string & Opt {
    return this.agent.id;
  }

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }
}
