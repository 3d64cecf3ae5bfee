import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

export enum McpServerStatus {
  pending = 'pending',
  ready = 'ready',
  unavailable = 'unavailable',
}
registerEnumType(McpServerStatus, {
  name: 'McpServerStatus',
  description: 'Whether an MCP server’s tools could be listed',
  valuesConfig: {
    pending: { description: 'Not listed yet' },
    ready: { description: 'Its tools were listed' },
    unavailable: { description: 'The last listing failed (lastError): its tools cannot be called' },
  },
});

@ObjectType({ description: 'A tool an MCP server listed, as the gateway keeps it' })
export class McpServerTool {
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Its input schema; null when it was refused' }) inputSchema!: Record<string, unknown> | null;
  @Field(() => String, { nullable: true, description: 'Why agents cannot use it (a name or a schema the gateway refuses); null when they can' }) refused!:
    string | null;
}

/** An MCP server (Streamable HTTP) whose tools agents may call; its auth header value is sealed and never shown. */
@ObjectType({ description: 'An MCP server (Streamable HTTP) whose tools agents may call (docs/tools.md#mcp-servers)' })
@Entity({ tableName: 'mcp_servers' })
@Unique({ properties: ['organization', 'name'] })
export class McpServer extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field({ description: '1 to 64 characters, unique in the organization' })
  @Property({ length: 64 })
  name!: string;

  @Field({ description: 'The Streamable HTTP endpoint (https, a public address; http and private addresses only with TOOLS_ALLOW_PRIVATE=true)' })
  @Property({ length: 2048 })
  url!: string;

  @Field(() => String, {
    nullable: true,
    description: 'The name of the header that authenticates the gateway (e.g. Authorization); its value is sealed and never shown',
  })
  @Property({ length: 64, nullable: true })
  authHeaderName: (string & Opt) | null = null;

  @Property({ type: 'text', nullable: true, lazy: true })
  authEncrypted: (string & Opt) | null = null;

  @Field(() => McpServerStatus, { description: 'pending, ready (its tools listed) or unavailable (lastError says why)' })
  @Enum({ items: () => McpServerStatus, default: McpServerStatus.pending })
  status: McpServerStatus & Opt = McpServerStatus.pending;

  @Field(() => [McpServerTool], { description: 'The tools it listed at its last refresh (empty while pending or unavailable)' })
  @Property({ type: 'json', default: '[]' })
  tools: McpServerTool[] & Opt = [];

  @Field(() => Date, { nullable: true, description: 'When its tools were last listed (or the listing failed)' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  refreshedAt: (Date & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Why the last listing failed; null when it did not' })
  @Property({ length: 500, nullable: true })
  lastError: (string & Opt) | null = null;
}
