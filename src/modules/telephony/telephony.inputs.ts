import { IsInt, IsOptional, IsString, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { OptionalNonNull, Rules } from '../../common/validation.js';
import { CarrierKindEnum, type CarrierKind } from './telephony.enums.js';

/** E.164: +, a country code that does not start with 0, at most 15 digits in all. */
export const E164 = /^\+[1-9]\d{1,14}$/;

const WEBHOOK_KEY_DESCRIPTION =
  'Write-only: the SharedKey secret of a Twilio Webhooks Rule, for an account whose webhooks are signed with it (they carry X-Twilio-Webhooks-Signature-Settings); stored encrypted, only its last 4 characters shown. 16 to 256 characters';
const CPS_DESCRIPTION = 'New calls per second this account may start, across all replicas: 1 to 100; default 1 (Twilio’s default)';
const PUBLIC_KEY_DESCRIPTION =
  'Telnyx only (required there): the account’s public key that signs its webhooks (Mission Control → Keys & Credentials → Public Key), 32 bytes in base64; shown back as given';
const APPLICATION_DESCRIPTION =
  'Telnyx only (required there): the id of the TeXML Application the calls are placed with (InitiateTexmlCall’s ApplicationSid); its numbers’ calls come in through it';

// The credential fields are checked by the service against the formats of the carrier module the
// connection's kind names (its `credentials`: required when it lists them, refused when not), and
// `carrier` against the gateway's modules: the input knows no carrier.

@InputType({ description: 'A new carrier connection; its credentials are checked with the carrier before anything is stored' })
export class CreateCarrierConnectionInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;

  @Field(() => CarrierKindEnum, { nullable: true, description: 'The kind of one of the gateway’s carriers; default twilio' })
  @OptionalNonNull()
  @IsString()
  carrier?: CarrierKind;

  @Field({ description: 'Twilio: AC followed by 32 hexadecimal digits. Telnyx: the account id (TeXML’s AccountSid), a UUID' })
  @IsString()
  accountSid!: string;

  @Field({
    description:
      'Write-only: stored encrypted, never shown again (only its last 4 characters). Twilio: the auth token, 32 hexadecimal digits. Telnyx: an API key (KEY…)',
  })
  @IsString()
  authToken!: string;

  @Field(() => Int, { nullable: true, description: CPS_DESCRIPTION })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  callsPerSecond?: number;

  @Field({ nullable: true, description: WEBHOOK_KEY_DESCRIPTION })
  @OptionalNonNull()
  @Length(16, 256)
  @IsString()
  webhookKey?: string;

  @Field({ nullable: true, description: PUBLIC_KEY_DESCRIPTION })
  @IsOptional()
  @IsString()
  publicKey?: string;

  @Field({ nullable: true, description: APPLICATION_DESCRIPTION })
  @IsOptional()
  @IsString()
  applicationId?: string;
}

@InputType({ description: 'Changes to a carrier connection; a new authToken rotates the credentials (checked with the carrier first)' })
export class UpdateCarrierConnectionInput {
  @Field({ nullable: true, description: '1 to 255 characters' })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field({
    nullable: true,
    description:
      'A new auth token (Twilio) or API key (Telnyx) for the same account (rotation); write-only, checked with the carrier before it replaces the old one',
  })
  @OptionalNonNull()
  @IsString()
  authToken?: string;

  @Field(() => Int, { nullable: true, description: CPS_DESCRIPTION })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  callsPerSecond?: number;

  @Field(() => String, { nullable: true, description: `${WEBHOOK_KEY_DESCRIPTION}; null removes it (webhooks signed with the auth token again)` })
  @IsOptional()
  @Length(16, 256)
  @IsString()
  webhookKey?: string | null;

  @Field({ nullable: true, description: `${PUBLIC_KEY_DESCRIPTION} (a new one after the account’s key was rotated)` })
  @OptionalNonNull()
  @Length(1, 64)
  @IsString()
  publicKey?: string;

  @Field({ nullable: true, description: APPLICATION_DESCRIPTION })
  @OptionalNonNull()
  @Length(1, 64)
  @IsString()
  applicationId?: string;
}

/** A phone number's field rules, once: its create and update inputs share them (each says whether the field is required). */
const PhoneNumberRules = {
  number: () => Rules(Matches(E164, { message: 'number must be in E.164 form: + and 2 to 15 digits, e.g. +14155550100' }), IsString()),
  label: () => Rules(IsOptional(), Length(1, 255), IsString()),
  id: () => Rules(IsOptional(), IsUUID(), IsString()),
};
const INBOUND_AGENT = 'Inbound calls to the number talk to this agent of the organization (at most one of inboundAgentId and inboundFlowId; null clears it)';
const INBOUND_FLOW = 'Inbound calls to the number walk this call flow of the organization (at most one of inboundAgentId and inboundFlowId; null clears it)';

@InputType({ description: 'A number the organization owns at its carrier' })
export class CreatePhoneNumberInput {
  @Field({ description: 'E.164, e.g. +14155550100; unique in the organization' })
  @PhoneNumberRules.number()
  number!: string;

  @Field(() => String, { nullable: true, description: 'At most 255 characters' })
  @PhoneNumberRules.label()
  label?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'A carrier connection of the organization the number belongs to; without one the number is a caller ID for simulated calls only',
  })
  @PhoneNumberRules.id()
  carrierConnectionId?: string | null;

  @Field(() => ID, { nullable: true, description: INBOUND_AGENT })
  @PhoneNumberRules.id()
  inboundAgentId?: string | null;

  @Field(() => ID, { nullable: true, description: INBOUND_FLOW })
  @PhoneNumberRules.id()
  inboundFlowId?: string | null;
}

@InputType({ description: 'Changes to a phone number; fields left out keep their values, null clears label and carrierConnectionId' })
export class UpdatePhoneNumberInput {
  @Field({ nullable: true, description: 'E.164, e.g. +14155550100; unique in the organization' })
  @OptionalNonNull()
  @PhoneNumberRules.number()
  number?: string;

  @Field(() => String, { nullable: true, description: 'At most 255 characters' })
  @PhoneNumberRules.label()
  label?: string | null;

  @Field(() => ID, { nullable: true, description: 'A carrier connection of the organization, or null to detach the number' })
  @PhoneNumberRules.id()
  carrierConnectionId?: string | null;

  @Field(() => ID, { nullable: true, description: INBOUND_AGENT })
  @PhoneNumberRules.id()
  inboundAgentId?: string | null;

  @Field(() => ID, { nullable: true, description: INBOUND_FLOW })
  @PhoneNumberRules.id()
  inboundFlowId?: string | null;
}
