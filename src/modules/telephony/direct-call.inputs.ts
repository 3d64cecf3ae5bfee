import { IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { IsTemplateValues, TEMPLATE_VALUES_SCHEMA } from '../agents/templates/template-values.js';
import { E164 } from '../contacts/contact.inputs.js';
import { ProgramCarrierEnum, type ProgramCarrier } from './telephony.enums.js';

const TO_MESSAGE = 'to must be an E.164 number such as +14155550100';
const FROM_MESSAGE = 'from must be an E.164 number such as +14155550100';

@InputType({ description: 'One outbound call, placed now: to one number, spoken by an agent or walked through a flow' })
export class PlaceCallInput {
  @Field({ description: 'The number to call, E.164: + and 7 to 15 digits' })
  @Matches(E164, { message: TO_MESSAGE })
  @IsString()
  to!: string;

  @Field(() => ID, { nullable: true, description: 'The active agent that speaks on the call; exactly one of agentId and flowId' })
  @OptionalNonNull()
  @IsUUID('all', { message: 'agentId must be a UUID' })
  agentId?: string;

  @Field(() => ID, { nullable: true, description: 'The call flow the call walks (its nodes’ agents speak); exactly one of agentId and flowId' })
  @OptionalNonNull()
  @IsUUID('all', { message: 'flowId must be a UUID' })
  flowId?: string;

  @Field(() => String, {
    nullable: true,
    description: 'The caller ID: one of the organization’s phone numbers (E.164). Required on a real carrier; optional on the simulator',
  })
  @OptionalNonNull()
  @Matches(E164, { message: FROM_MESSAGE })
  @IsString()
  from?: string;

  @Field(() => ProgramCarrierEnum, {
    nullable: true,
    description: 'Where the call is placed. Default: the carrier of the from number’s connection, else the simulator',
  })
  @OptionalNonNull()
  @IsString()
  carrier?: ProgramCarrier;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Values of the agent’s variables for this call: at most 50, each a string, number or boolean of at most 1000 characters; they come before the contact’s attributes and the defaults',
  })
  @JSONSchema(TEMPLATE_VALUES_SCHEMA)
  @IsOptional()
  @IsTemplateValues()
  variables?: Record<string, unknown> | null;
}
