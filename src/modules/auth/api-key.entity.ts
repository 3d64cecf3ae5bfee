import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { User } from './user.entity.js';

/** A long-lived key. Only the SHA-256 hash of the full value is stored; the value is shown once. */
@ObjectType({ description: 'A long-lived API key; its secret is shown only when it is created' })
@Entity({ tableName: 'api_keys' })
export class ApiKey extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field({ description: 'The prefix given at creation' })
  @Property({ length: 20 })
  keyPrefix!: string;

  @Property({ length: 64, unique: true })
  keyHash!: string;

  @Field(() => Boolean)
  @Property({ type: 'boolean', default: true })
  isActive: boolean & Opt = true;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  expiresAt: (Date & Opt) | null = null;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  lastUsedAt: (Date & Opt) | null = null;

  /** Whether a request presenting this key may pass. */
  isUsable(now = new Date()): boolean {
    return this.isActive && (this.expiresAt === null || this.expiresAt.getTime() > now.getTime());
  }
}

@ObjectType({ description: 'An API key as returned once by its creation, with the full key value' })
export class CreatedApiKey extends ApiKey {
  @Field({ description: 'The full key value. It is shown only in this response; store it safely.' })
  secret!: string;
}
