import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

export type IdempotencyStatus = 'in_progress' | 'completed';

/**
 * One Idempotency-Key of a REST create, reserved before its handler runs. The unique constraint
 * is the lock: a second request with the same scope and key cannot reserve it again.
 */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ properties: ['organization', 'apiKeyId', 'userId', 'method', 'path', 'key'] })
@Index({ properties: ['organization', 'expiresAt'] })
export class IdempotencyKey extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  /** The key presented, or the key a bearer token was minted from. */
  @Property({ type: 'uuid' })
  apiKeyId!: string;

  @Property({ type: 'uuid' })
  userId!: string;

  @Property({ length: 10 })
  method!: string;

  /** The concrete path, ids included: `/api/agents/<id>/conversations`. */
  @Property({ length: 2048 })
  path!: string;

  @Property({ length: 255 })
  key!: string;

  /** SHA-256 of the canonical JSON of the request body. */
  @Property({ length: 64 })
  requestHash!: string;

  @Property({ type: 'string', length: 20 })
  status: IdempotencyStatus & Opt = 'in_progress';

  @Property({ type: 'integer', nullable: true })
  responseStatus: (number & Opt) | null = null;

  @Property({ type: 'json', nullable: true })
  responseBody: (unknown & Opt) | null = null;

  /** The answer carried a one-time secret; it was not stored, so it cannot be replayed. */
  @Property({ type: 'boolean', default: false })
  secretOmitted: boolean & Opt = false;

  @Property({ columnType: 'timestamptz', type: 'Date' })
  expiresAt!: Date;
}
