import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDate,
  IsEnum,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int } from 'type-graphql';
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { IsTemplateValues, TEMPLATE_VALUES_SCHEMA } from '../agents/templates/template-values.js';
import { toDate } from '../../common/dates.js';
import { OptionalNonNull } from '../../common/validation.js';
import { ProgramKind } from './program.enums.js';
import { ProgramCarrierEnum, type ProgramCarrier } from '../telephony/telephony.enums.js';
import { ProgramRecordingInput } from '../recordings/recording-settings.js';
import { ProgramVoicemailInput } from './voicemail/program-voicemail.js';
import { SCREENING_RESPONSE_MAX } from '../agents/templates/screening.js';
import {
  ProgramAutoPauseRuleInput,
  ProgramCallingWindowInput,
  ProgramLiveTriggerInput,
  ProgramRetryPolicyInput,
  ProgramSimulatedCallerInput,
} from './program-settings.inputs.js';

// Rules across fields (flowId xor agentId, stop after start, liveTrigger iff live, nodeIds of the flow) are in ProgramService.

/** The settings a program is made of; create requires kind, name and audienceId, update sends any of them. */
@InputType({ description: 'The settings of a program; CreateProgramInput and UpdateProgramInput add to them' })
export class ProgramSettingsInput {
  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @MaxLength(2000)
  @IsString()
  description?: string | null;

  @Field(() => ID, { nullable: true, description: 'A call flow of the organization; exactly one of flowId and agentId' })
  @IsOptional()
  @IsUUID()
  @IsString()
  flowId?: string | null;

  @Field(() => ID, { nullable: true, description: 'An agent of the organization, for a program without a flow' })
  @IsOptional()
  @IsUUID()
  @IsString()
  agentId?: string | null;

  @Field(() => Date, { nullable: true })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'scheduledStartAt must be an ISO 8601 date-time' })
  scheduledStartAt?: Date | null;

  @Field(() => Date, { nullable: true, description: 'After scheduledStartAt' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'scheduledStopAt must be an ISO 8601 date-time' })
  scheduledStopAt?: Date | null;

  @Field(() => ProgramCallingWindowInput, { nullable: true, description: 'Any time when absent' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProgramCallingWindowInput)
  @IsObject()
  callingWindow?: ProgramCallingWindowInput | null;

  @Field(() => Int, { nullable: true, description: '1 to 100; default 1' })
  @OptionalNonNull()
  @Max(100)
  @Min(1)
  @IsInt()
  maxConcurrentCalls?: number;

  @Field(() => ProgramSimulatedCallerInput, {
    nullable: true,
    description: 'What the simulated carrier’s caller says at ask nodes; default: a few seeded lines',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProgramSimulatedCallerInput)
  @IsObject()
  simulatedCaller?: ProgramSimulatedCallerInput | null;

  @Field(() => ProgramRecordingInput, {
    nullable: true,
    description: 'Record the answered calls (mono or dual), optionally after a consent sentence; null or absent on create: not recorded',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProgramRecordingInput)
  @IsObject()
  recording?: ProgramRecordingInput | null;

  @Field(() => ProgramVoicemailInput, {
    nullable: true,
    description: 'When a machine answers (asynchronous detection, after its greeting): leave a message after the beep, or hang up; null: not set',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProgramVoicemailInput)
  @IsObject()
  voicemail?: ProgramVoicemailInput | null;

  @Field(() => String, {
    nullable: true,
    description: `1 to ${SCREENING_RESPONSE_MAX} characters: what the agent answers an automated call screener with on outbound calls (a template like firstMessage: {{organization.name}}, {{contact.name}}, variables); null: the default`,
  })
  @IsOptional()
  @Length(1, SCREENING_RESPONSE_MAX, { message: `screeningResponse must be 1 to ${SCREENING_RESPONSE_MAX} characters` })
  @IsString({ message: 'screeningResponse must be a string' })
  screeningResponse?: string | null;

  @Field(() => ProgramRetryPolicyInput, { nullable: true, description: 'Default: one attempt' })
  @OptionalNonNull()
  @ValidateNested()
  @Type(() => ProgramRetryPolicyInput)
  @IsObject()
  retryPolicy?: ProgramRetryPolicyInput;

  @Field(() => [ProgramAutoPauseRuleInput], { nullable: true, description: 'At most 20' })
  @OptionalNonNull()
  @ValidateNested({ each: true })
  @Type(() => ProgramAutoPauseRuleInput)
  @IsObject({ each: true })
  @ArrayMaxSize(20)
  @IsArray()
  autoPauseRules?: ProgramAutoPauseRuleInput[];

  @Field(() => ProgramLiveTriggerInput, { nullable: true, description: 'Required for live programs only' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProgramLiveTriggerInput)
  @IsObject()
  liveTrigger?: ProgramLiveTriggerInput | null;

  @Field(() => ProgramCarrierEnum, {
    nullable: true,
    description:
      'Where the calls are placed: simulator (default on create), or a carrier’s kind (the organization’s connection there; activation checks it is ready); not web',
  })
  @OptionalNonNull()
  @IsString()
  carrier?: ProgramCarrier;

  @Field(() => ID, {
    nullable: true,
    description: 'A phone number of the organization, the caller ID of the calls; required to activate a program on a real carrier (twilio, telnyx)',
  })
  @IsOptional()
  @IsUUID()
  @IsString()
  fromNumberId?: string | null;
}

@InputType({ description: 'A new program; it starts as a draft' })
export class CreateProgramInput extends ProgramSettingsInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;

  @Field(() => ProgramKind)
  @IsEnum(ProgramKind)
  kind!: ProgramKind;

  @Field(() => ID, { description: 'An audience of the organization' })
  @IsUUID()
  @IsString()
  audienceId!: string;
}

@InputType({ description: 'Changes the fields that are sent; the result is checked as a whole' })
export class UpdateProgramInput extends ProgramSettingsInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field(() => ProgramKind, { nullable: true })
  @OptionalNonNull()
  @IsEnum(ProgramKind)
  kind?: ProgramKind;

  @Field(() => ID, { nullable: true })
  @OptionalNonNull()
  @IsUUID()
  @IsString()
  audienceId?: string;
}

@InputType({ description: 'Optional settings of a new execution' })
export class CreateExecutionInput {
  @Field(() => Date, { nullable: true, description: 'Default: the program’s scheduledStartAt' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'scheduledStartAt must be an ISO 8601 date-time' })
  scheduledStartAt?: Date | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Values of the agents’ variables, the same for every contact: at most 50, each a string, number or boolean of at most 1000 characters; a contact’s attribute of the same name comes first',
  })
  @JSONSchema(TEMPLATE_VALUES_SCHEMA)
  @IsOptional()
  @IsTemplateValues()
  variables?: Record<string, unknown> | null;
}
