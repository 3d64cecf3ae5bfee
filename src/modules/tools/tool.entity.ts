import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

export enum ToolMethod {
  POST = 'POST',
  PUT = 'PUT',
  PATCH = 'PATCH',
}
registerEnumType(ToolMethod, {
  name: 'ToolMethod',
  description: 'How an HTTP tool’s request is sent: its JSON body in every case',
  valuesConfig: { POST: { description: 'POST (the default)' }, PUT: { description: 'PUT' }, PATCH: { description: 'PATCH' } },
});

/**
 * An organization's HTTP tool: what the model is told (name, description, parameters) and where the
 * call goes. Its header values and its signing secret are sealed under CREDENTIALS_KEY and never
 * shown again (the header names and the secret's last 4 characters are).
 */
@ObjectType({ description: 'An HTTP tool agents may call: one signed JSON request to the business’s URL per call (docs/tools.md)' })
@Entity({ tableName: 'tools' })
@Unique({ properties: ['organization', 'name'] })
export class Tool extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field({ description: 'What the model calls it: 1 to 64 letters, digits, _ or -; unique in the organization; not a built-in tool’s name' })
  @Property({ length: 64 })
  name!: string;

  @Field({ description: 'What the model is told the tool does' })
  @Property({ type: 'text' })
  description!: string;

  @Field(() => GraphQLJSONObject, {
    description: 'The JSON Schema (type object) of the arguments; the model’s arguments are validated against it before anything is sent',
  })
  @Property({ type: 'json' })
  parameters!: Record<string, unknown>;

  @Field({ description: 'Where the request goes: https, a public address (http and private addresses only with TOOLS_ALLOW_PRIVATE=true)' })
  @Property({ length: 2048 })
  url!: string;

  @Field(() => ToolMethod, { description: 'The HTTP method of the request: POST, PUT or PATCH' })
  @Enum({ items: () => ToolMethod, default: ToolMethod.POST })
  method: ToolMethod & Opt = ToolMethod.POST;

  @Field(() => [String], { description: 'The names of the headers the request carries; their values are sealed and never shown' })
  @Property({ type: 'json', default: '[]' })
  headerNames: string[] & Opt = [];

  /** JSON {name: value} sealed under CREDENTIALS_KEY (platform/credentials.ts); null without headers. */
  @Property({ type: 'text', nullable: true, lazy: true })
  headersEncrypted: (string & Opt) | null = null;

  @Field(() => Int, { description: 'The deadline of the whole exchange, in milliseconds (default 5000, at most 30000)' })
  @Property({ type: 'integer', default: 5000 })
  timeoutMs: number & Opt = 5000;

  /** The Standard Webhooks signing secret, sealed. */
  @Property({ type: 'text', lazy: true })
  secretEncrypted!: string;

  @Field({ description: 'The last 4 characters of the current signing secret' })
  @Property({ length: 8 })
  secretHint!: string;

  @Property({ type: 'text', nullable: true, lazy: true })
  previousSecretEncrypted: (string & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'Until when the secret before the last rotation still signs alongside the current one' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  previousSecretExpiresAt: (Date & Opt) | null = null;
}

@ObjectType({ description: 'An HTTP tool as its creation or a secret rotation answers it, with the signing secret: shown only here' })
export class ToolWithSecret extends Tool {
  @Field({ description: 'whsec_ + base64 of 32 random bytes: verify each request with it (Standard Webhooks). Shown only in this answer' })
  secret!: string;
}
