import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Extensions, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { LARGE_VALUE } from '../../platform/answer-budget.js';

export enum ToolCallStatus {
  succeeded = 'succeeded',
  failed = 'failed',
  rejected = 'rejected',
}
registerEnumType(ToolCallStatus, {
  name: 'ToolCallStatus',
  description: 'How a tool call ended',
  valuesConfig: {
    succeeded: { description: 'The tool answered 2xx (an MCP tool: a result without isError)' },
    failed: { description: 'It was sent and failed: a timeout, a refused address, a non-2xx answer, an unreachable host, an error result' },
    rejected: { description: 'Nothing was sent: arguments outside the schema, the hidden policy in them, a tool no longer there' },
  },
});

export enum ToolSource {
  http = 'http',
  mcp = 'mcp',
}
registerEnumType(ToolSource, {
  name: 'ToolSource',
  description: 'Where a tool an agent called is defined',
  valuesConfig: { http: { description: 'An HTTP tool of the organization' }, mcp: { description: 'A tool one of its MCP servers lists' } },
});

/**
 * One tool call an agent made, in its conversation's order: `afterSequence` is the sequence of the
 * message it came after (0: before the first), `sequence` its place among the conversation's tool
 * calls. Written with raw SQL (tool-call.store.ts); the entity declares the table.
 */
@ObjectType({ description: 'A tool call an agent made: what it sent, what came back, how long it took' })
@Entity({ tableName: 'tool_calls' })
export class ToolCall extends BaseEntity {
  @Property({ type: 'uuid' })
  @Index()
  organizationId!: string;

  @Field(() => ID, { nullable: true, description: 'Null for a test message (POST /api/agents/{id}/test), which stores nothing' })
  @Property({ type: 'uuid' })
  conversationId!: string | null;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  agentId!: string;

  @Field(() => ID, { nullable: true, description: 'The phone call, for a call’s conversation' })
  @Property({ type: 'uuid', nullable: true })
  callId: (string & Opt) | null = null;

  @Field(() => Int, { description: 'Its place among the conversation’s tool calls, from 1' })
  @Property({ type: 'integer' })
  sequence!: number;

  @Field(() => Int, { description: 'The sequence of the message it came after (0: before the first): read with the messages, it is in their order' })
  @Property({ type: 'integer' })
  afterSequence!: number;

  @Field({ description: 'The name the model called' })
  @Property({ length: 64 })
  tool!: string;

  @Field(() => ToolSource, { description: 'An HTTP tool (toolId is its id) or an MCP server’s tool (toolId is the server’s id)' })
  @Enum({ items: () => ToolSource })
  source!: ToolSource;

  @Field(() => ID, { nullable: true, description: 'The HTTP tool, or the MCP server, called' })
  @Property({ type: 'uuid', nullable: true })
  toolId: (string & Opt) | null = null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The arguments the model wrote; null when they were withheld (they repeated the hidden policy)',
  })
  @Extensions(LARGE_VALUE)
  @Property({ type: 'json', nullable: true })
  arguments: Record<string, unknown> | null = null;

  @Field(() => ToolCallStatus, { description: 'How the call ended: succeeded, failed (sent) or rejected (nothing sent)' })
  @Enum({ items: () => ToolCallStatus })
  status!: ToolCallStatus;

  @Field(() => Int, { nullable: true, description: 'The HTTP status the tool answered (null when none came)' })
  @Property({ type: 'integer', nullable: true })
  statusCode: (number & Opt) | null = null;

  @Field(() => Int, { description: 'From the call to its answer (or its failure), in milliseconds' })
  @Property({ type: 'integer' })
  durationMs!: number;

  @Field(() => String, { nullable: true, description: 'What the tool answered, cut to 4000 characters' })
  @Extensions(LARGE_VALUE)
  @Property({ type: 'text', nullable: true })
  answer: (string & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'What went wrong, as the model was told it' })
  @Property({ type: 'text', nullable: true })
  error: (string & Opt) | null = null;
}
