import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

/**
 * Where an organization's events are pushed. The signing secret is write-once: sealed under
 * CREDENTIALS_KEY (AES-256-GCM) and shown only by the create and rotate answers.
 */
@ObjectType({
  description: 'A URL the organization’s events are delivered to, signed per Standard Webhooks (the secret is never shown again, only its last 4 characters)',
})
@Entity({ tableName: 'webhook_endpoints' })
export class WebhookEndpoint extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field({ description: 'https URL the deliveries are POSTed to' })
  @Property({ length: 2048 })
  url!: string;

  @Field(() => [String], { description: 'The event types delivered; empty = every type' })
  @Property({ type: 'json' })
  eventTypes: string[] & Opt = [];

  @Field(() => String, { nullable: true })
  @Property({ length: 500, nullable: true })
  description: (string & Opt) | null = null;

  @Field(() => Boolean, { description: 'Disabled endpoints get no new deliveries' })
  @Property({ type: 'boolean', default: true })
  enabled: boolean & Opt = true;

  @Field(() => String, {
    nullable: true,
    description: 'Why the gateway disabled the endpoint (a 410 answer, 5 days of failures); null when enabled or disabled by a user',
  })
  @Property({ length: 500, nullable: true })
  disabledReason: (string & Opt) | null = null;

  /** `v1:<iv>:<tag>:<ciphertext>`, base64; see platform/credentials.ts. */
  @Property({ type: 'text', lazy: true })
  secretEncrypted!: string;

  @Field({ description: 'The last 4 characters of the current signing secret' })
  @Property({ length: 8 })
  secretHint!: string;

  /** The secret before the last rotation, still signing until previousSecretExpiresAt. */
  @Property({ type: 'text', nullable: true, lazy: true })
  previousSecretEncrypted: (string & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'Until when the secret before the last rotation still signs alongside the current one' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  previousSecretExpiresAt: (Date & Opt) | null = null;

  /** When the first of an unbroken run of failed attempts happened; a success clears it. */
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  failingSince: (Date & Opt) | null = null;
}

@ObjectType({ description: 'A webhook endpoint as its creation or a secret rotation answers it, with the signing secret: shown only here' })
export class WebhookEndpointWithSecret extends WebhookEndpoint {
  @Field({ description: 'whsec_ + base64 of 32 random bytes. Shown only in this answer; store it safely' })
  secret!: string;
}
