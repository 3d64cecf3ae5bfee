import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { computedFieldSql, derivedFields } from '../../db/read-model.js';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { AgentStatus, FirstMessageMode } from './agent.enums.js';
import { AgentVariable } from './templates/agent-variable.types.js';
import { AnalysisPlan } from './analysis/analysis.types.js';
import { AgentMcpTools } from './agent-tools.types.js';
import { MemoryConfig, ModelConfig, ResolutionCriterion, VoiceConfig, type KnowledgeBaseConfig } from './agent.types.js';
import { TransferDestination } from './transfer-destination.types.js';

/** A configurable assistant. Its `policy` reaches the model only: it is no GraphQL field, so no door shows it. */
@ObjectType({ description: 'An AI agent; its policy is never shown' })
@Entity({ tableName: 'agents' })
export class Agent extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field()
  @Property({ length: 128 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: (string & Opt) | null = null;

  @Field({ description: 'The system prompt' })
  @Property({ type: 'text' })
  instructions!: string;

  @Property({ type: 'text', nullable: true })
  policy: (string & Opt) | null = null;

  @Field(() => String, {
    nullable: true,
    description:
      'What the agent says first on a call (a template); null: a greeting naming the contact and the organization on an outbound call, "Hello, this is <agent>. How can I help you?" on an inbound one',
  })
  @Property({ type: 'text', nullable: true })
  firstMessage: (string & Opt) | null = null;

  @Field(() => FirstMessageMode, { description: 'Whether the agent speaks first when a call is answered, or waits for the caller' })
  @Enum({ items: () => FirstMessageMode, default: FirstMessageMode.agent_speaks_first })
  firstMessageMode: FirstMessageMode & Opt = FirstMessageMode.agent_speaks_first;

  @Field(() => [AgentVariable], { description: 'The variables the templates use, with their defaults' })
  @Property({ type: 'json', default: '[]' })
  variables: AgentVariable[] & Opt = [];

  @Field(() => AgentStatus)
  @Enum({ items: () => AgentStatus, default: AgentStatus.draft })
  status: AgentStatus & Opt = AgentStatus.draft;

  @Field(() => Int, { description: 'Starts at 1; every update adds one' })
  @Property({ type: 'integer', default: 1 })
  version: number & Opt = 1;

  @Field(() => ModelConfig)
  @Property({ type: 'json' })
  modelConfig!: ModelConfig;

  @Field(() => VoiceConfig, { nullable: true })
  @Property({ type: 'json', nullable: true })
  voiceConfig: (VoiceConfig & Opt) | null = null;

  @Field(() => MemoryConfig, { nullable: true })
  @Property({ type: 'json', nullable: true })
  memoryConfig: (MemoryConfig & Opt) | null = null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @Property({ type: 'json', nullable: true })
  metadata: (Record<string, unknown> & Opt) | null = null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: '{knowledgeBaseId, topK, similarityThreshold}' })
  @Property({ type: 'json', nullable: true })
  knowledgeBaseConfig: (KnowledgeBaseConfig & Opt) | null = null;

  @Field(() => [ResolutionCriterion])
  @Property({ type: 'json' })
  resolutionCriteria: ResolutionCriterion[] & Opt = [];

  @Field(() => AnalysisPlan, {
    nullable: true,
    description: 'What the agent’s model fills when one of its calls ends (a summary, fields by a JSON Schema); null when nothing',
  })
  @Property({ type: 'json', nullable: true })
  analysisPlan: (AnalysisPlan & Opt) | null = null;

  @Field(() => [ID], { description: 'The organization’s HTTP tools the agent may call, besides the built-in ones' })
  @Property({ type: 'json', default: '[]' })
  toolIds: string[] & Opt = [];

  @Field(() => [AgentMcpTools], { description: 'Tools of the organization’s MCP servers the agent may call' })
  @Property({ type: 'json', default: '[]' })
  mcpTools: AgentMcpTools[] & Opt = [];

  @Field(() => [TransferDestination], { description: 'Whom the agent may hand a call to (its transfer_call tool); empty: no transfer' })
  @Property({ type: 'json', default: '[]' })
  transferDestinations: TransferDestination[] & Opt = [];

  @Field(() => ID, { nullable: true, description: 'The user who created the agent' })
  @Property({ type: 'uuid', nullable: true })
  createdBy: (string & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'Set when the agent is deleted (archived); the record is kept' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  deletedAt: (Date & Opt) | null = null;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field(() => Boolean, { description: 'Whether a policy is set; the policy itself is never shown' })
  get hasPolicy(): boolean & Opt {
    return Boolean(this.policy);
  }
}

// A page that shows hasPolicy reads the policy column (never shown itself), and no other it does not show.
derivedFields(Agent, { hasPolicy: ['policy'] });
// The same, when the database writes the answer: Boolean(policy).
computedFieldSql(Agent, { hasPolicy: (alias) => `coalesce(${alias}.policy, '') <> ''` });
