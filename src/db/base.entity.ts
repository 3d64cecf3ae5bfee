import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/** Id and timestamps every table has; `updatedAt` moves on every flush that changes the row. */
@ObjectType()
export abstract class BaseEntity {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string & Opt = randomUUID();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'Date' })
  createdAt: Date & Opt = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'Date', onUpdate: () => new Date() })
  updatedAt: Date & Opt = new Date();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; any other string names no record, so lookups answer 404 rather than a SQL error. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
