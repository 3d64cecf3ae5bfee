import type { Opt } from '@mikro-orm/core';
import { Entity, Property } from '@mikro-orm/decorators/legacy';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';

/** A tenant: every other record belongs to exactly one organization. */
@ObjectType()
@Entity({ tableName: 'organizations' })
export class Organization extends BaseEntity {
  @Field()
  @Property({ length: 255 })
  name!: string;

  /** Call credits; campaigns spend them and pause when they run out. */
  @Field(() => Int)
  @Property({ type: 'integer', default: 0 })
  creditBalance: number & Opt = 0;

  /** Recordings older than this many days are deleted (at the carrier too) by the runner; null keeps them until a user deletes them. */
  @Field(() => Int, { nullable: true, description: 'Call recordings are deleted (at the carrier too) this many days after they were made; null: kept until deleted' })
  @Property({ type: 'integer', nullable: true })
  recordingRetentionDays: (number & Opt) | null = null;
}
