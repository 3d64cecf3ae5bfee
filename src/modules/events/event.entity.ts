import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { Organization } from '../organizations/organization.entity.js';

/**
 * One row of the transactional outbox: something that happened, written in the same transaction
 * as the change itself, so it commits or rolls back with it. Never updated; deleted by retention.
 */
@ObjectType({ description: 'Something that happened in the organization, written in the same transaction as the change' })
@Entity({ tableName: 'events' })
@Index({ properties: ['organization', 'createdAt'] })
@Index({ properties: ['organization', 'type', 'createdAt'] })
@Index({ properties: ['createdAt'] })
export class Event {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string & Opt = randomUUID();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field(() => String, { description: 'What happened: execution.started, call.ended, conversation.message, …' })
  @Property({ type: 'string', length: 64 })
  type!: string;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'Date' })
  createdAt: Date & Opt = new Date();

  @Field(() => GraphQLJSONObject, { description: 'The resource the event is about, shaped as REST shows it, plus what the type adds (from, to, reason, …)' })
  @Property({ type: 'json' })
  payload!: Record<string, unknown>;
}
