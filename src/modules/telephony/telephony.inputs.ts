import { IsEnum, IsInt, IsOptional, IsString, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { OptionalNonNull, Rules } from '../../common/validation.js';
import { CarrierKind } from './telephony.enums.js';

/** Twilio's formats: an account SID is AC + 32 hex digits, an auth token 32 hex digits. */
export const TWILIO_ACCOUNT_SID = /^AC[0-9a-f]{32}$/;
export const TWILIO_AUTH_TOKEN = /^[0-9a-f]{32}$/;
/** E.164: +, a country code that does not start with 0, at most 15 digits in all. */
export const E164 = /^\+[1-9]\d{1,14}$/;

const SID_MESSAGE = 'accountSid must be a Twilio account SID: AC followed by 32 hexadecimal digits (lowercase)';
const TOKEN_MESSAGE = 'authToken must be a Twilio auth token: 32 hexadecimal digits (lowercase)';
const CPS_DESCRIPTION = 'New calls per second this account may start, across all replicas: 1 to 100; default 1 (Twilio’s default)';

@InputType({ description: 'A new carrier connection; its credentials are checked with the carrier before anything is stored' })
export class CreateCarrierConnectionInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;

  @Field(() => CarrierKind, { nullable: true, description: 'Default twilio' })
  @OptionalNonNull()
  @IsEnum(CarrierKind)
  carrier?: CarrierKind;

  @Field({ description: 'Twilio: AC followed by 32 hexadecimal digits' })
  @Matches(TWILIO_ACCOUNT_SID, { message: SID_MESSAGE })
  @IsString()
  accountSid!: string;

  @Field({ description: 'Write-only: stored encrypted, never shown again (only its last 4 characters). Twilio: 32 hexadecimal digits' })
  @Matches(TWILIO_AUTH_TOKEN, { message: TOKEN_MESSAGE })
  @IsString()
  authToken!: string;

  @Field(() => Int, { nullable: true, description: CPS_DESCRIPTION })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  callsPerSecond?: number;
}

@InputType({ description: 'Changes to a carrier connection; a new authToken rotates the credentials (checked with the carrier first)' })
export class UpdateCarrierConnectionInput {
  @Field({ nullable: true, description: '1 to 255 characters' })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field({ nullable: true, description: 'A new auth token for the same account (rotation); write-only, checked with the carrier before it replaces the old one' })
  @OptionalNonNull()
  @Matches(TWILIO_AUTH_TOKEN, { message: TOKEN_MESSAGE })
  @IsString()
  authToken?: string;

  @Field(() => Int, { nullable: true, description: CPS_DESCRIPTION })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  callsPerSecond?: number;
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

  @Field(() => ID, { nullable: true, description: 'A carrier connection of the organization the number belongs to; without one the number is a caller ID for simulated calls only' })
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
