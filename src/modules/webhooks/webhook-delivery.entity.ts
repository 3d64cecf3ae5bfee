import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Extensions, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { MAX_ATTEMPTS } from './webhook-schedule.js';

export enum WebhookDeliveryStatus {
  pending = 'pending',
  succeeded = 'succeeded',
  failed = 'failed',
}
registerEnumType(WebhookDeliveryStatus, {
  name: 'WebhookDeliveryStatus',
  description: 'Where a delivery stands',
  valuesConfig: {
    pending: { description: 'Not sent yet, or waiting for its next attempt' },
    succeeded: { description: 'The endpoint answered 2xx' },
    failed: { description: 'Every attempt failed (about 3 days of retries), the endpoint answered 410, or it was disabled' },
  },
});

@ObjectType({ description: 'One try at sending a delivery' })
export class WebhookDeliveryAttempt {
  @Field(() => Int, { description: '1 for the first try' })
  attempt!: number;

  @Field(() => Date, { description: 'When the attempt was made' })
  attemptedAt!: Date;

  @Field(() => Int, { nullable: true, description: 'The HTTP status the endpoint answered; null when none came (timeout, network error, refused address)' })
  statusCode!: number | null;

  @Field(() => Int, { description: 'Milliseconds from sending to the answer (or the failure)' })
  latencyMs!: number;

  @Field(() => String, { nullable: true, description: 'Why the attempt failed; null when it succeeded' })
  error!: string | null;
}

/** One event (or test event) to send to one endpoint, retried until it succeeds or gives up. */
@ObjectType({ description: 'An event sent (or to be sent) to an endpoint, with its attempts' })
@Entity({ tableName: 'webhook_deliveries' })
export class WebhookDelivery extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => WebhookEndpoint, { deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @Field(() => ID)
  get endpointId(): string & Opt {
    return this.endpoint.id;
  }

  @Field(() => ID, { nullable: true, description: 'The event delivered; null for a test event (webhook.test), which is not in the event stream' })
  @Property({ type: 'uuid', nullable: true })
  eventId: (string & Opt) | null = null;

  @Field(() => ID, { description: 'The webhook-id header: the event id (a test event has its own), the same on every attempt and re-send' })
  @Property({ type: 'uuid' })
  messageId!: string;

  @Field({ description: 'The event type (webhook.test for a test event)' })
  @Property({ length: 64 })
  eventType!: string;

  @Property({ columnType: 'timestamptz', type: 'Date' })
  eventCreatedAt!: Date;

  /** The test event's data; an event's delivery reads the event's payload. */
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The data of a test event; null for an event’s delivery, which sends the event’s payload' })
  @Property({ type: 'json', nullable: true })
  payload: (Record<string, unknown> & Opt) | null = null;

  @Field(() => Boolean, { description: 'True for a re-send on demand or a test event' })
  @Property({ type: 'boolean', default: false })
  manual: boolean & Opt = false;

  @Field(() => WebhookDeliveryStatus, { description: 'pending, succeeded or failed' })
  @Enum({ items: () => WebhookDeliveryStatus, default: WebhookDeliveryStatus.pending })
  status: WebhookDeliveryStatus & Opt = WebhookDeliveryStatus.pending;

  @Field(() => Int, { description: 'Attempts made so far' })
  @Property({ type: 'integer', default: 0, fieldName: 'attempts' })
  attemptCount: number & Opt = 0;

  @Field(() => Date, { nullable: true, description: 'When the next attempt is due (pending only)' })
  @Property({ columnType: 'timestamptz', type: 'Date' })
  nextAttemptAt!: Date;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  leaseUntil: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'When the last attempt was made' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  lastAttemptAt: (Date & Opt) | null = null;

  @Field(() => Int, { nullable: true, description: 'The HTTP status of the last attempt; null when none came' })
  @Property({ type: 'integer', nullable: true })
  lastStatusCode: (number & Opt) | null = null;

  @Field(() => Int, { nullable: true, description: 'Milliseconds the last attempt took' })
  @Property({ type: 'integer', nullable: true })
  lastLatencyMs: (number & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Why the last attempt failed; null when it succeeded or none was made' })
  @Property({ length: 1000, nullable: true })
  lastError: (string & Opt) | null = null;

  /** Read from webhook_delivery_attempts by the service (not a column). */
  @Field(() => [WebhookDeliveryAttempt], { description: 'Every attempt, oldest first (at most 12)' })
  @Extensions({ cost: { size: MAX_ATTEMPTS } })
  attempts?: WebhookDeliveryAttempt[] & Opt;
}
