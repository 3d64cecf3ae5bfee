import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, IsUUID, Length, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { OptionalNonNull, Rules } from '../../common/validation.js';
import { EVENT_TYPES } from '../events/event.types.js';

const URL_DESCRIPTION =
  'https URL (at most 2048 characters) the deliveries are POSTed to; it must not resolve to a private, loopback, link-local or metadata address (http and those only with WEBHOOK_ALLOW_PRIVATE=true)';
const TYPES_DESCRIPTION = `The event types to deliver; empty or left out = every type. Known types: ${EVENT_TYPES.join(', ')}`;

/** The field rules create and update share (each says whether the field is required). */
const EndpointRules = {
  url: () => Rules(Length(1, 2048), IsString()),
  eventTypes: () =>
    Rules(
      ArrayMaxSize(EVENT_TYPES.length),
      IsIn(EVENT_TYPES, { each: true, message: `eventTypes must hold only known event types: ${EVENT_TYPES.join(', ')}` }),
      IsArray(),
    ),
  description: () => Rules(IsOptional(), MaxLength(500), IsString()),
};

@InputType({ description: 'A new webhook endpoint; its signing secret is in the answer, and only there' })
export class CreateWebhookEndpointInput {
  @Field({ description: URL_DESCRIPTION })
  @EndpointRules.url()
  url!: string;

  @Field(() => [String], { nullable: true, description: TYPES_DESCRIPTION })
  @OptionalNonNull()
  @EndpointRules.eventTypes()
  eventTypes?: string[];

  @Field(() => String, { nullable: true, description: 'At most 500 characters' })
  @EndpointRules.description()
  description?: string | null;

  @Field({ nullable: true, description: 'Default true' })
  @OptionalNonNull()
  @IsBoolean()
  enabled?: boolean;
}

@InputType({ description: 'Changes to a webhook endpoint; fields left out keep their values. Enabling clears disabledReason' })
export class UpdateWebhookEndpointInput {
  @Field({ nullable: true, description: URL_DESCRIPTION })
  @OptionalNonNull()
  @EndpointRules.url()
  url?: string;

  @Field(() => [String], { nullable: true, description: TYPES_DESCRIPTION })
  @OptionalNonNull()
  @EndpointRules.eventTypes()
  eventTypes?: string[];

  @Field(() => String, { nullable: true, description: 'At most 500 characters; null clears it' })
  @EndpointRules.description()
  description?: string | null;

  @Field({ nullable: true, description: 'false stops new deliveries (pending ones fail); true starts them again' })
  @OptionalNonNull()
  @IsBoolean()
  enabled?: boolean;
}

@InputType({ description: 'An event of the organization to send again to the endpoint' })
export class CreateWebhookDeliveryInput {
  @Field(() => ID, { description: 'The event’s id (GET /api/events)' })
  @IsUUID(undefined, { message: 'eventId must be a UUID' })
  @IsString()
  eventId!: string;
}
