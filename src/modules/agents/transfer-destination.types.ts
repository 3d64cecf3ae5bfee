import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { AppError } from '../../common/errors.js';
import { Rules } from '../../common/validation.js';

/** The most destinations one agent may transfer to: each is a value of transfer_call's enum. */
export const MAX_TRANSFER_DESTINATIONS = 10;
/** E.164, or a `sip:`/`sips:` URI with a user and a host (RFC 3261's `sip:user@host[:port][;params]`), no spaces or angle brackets. */
export const TRANSFER_NUMBER = /^(?:\+[1-9]\d{1,14}|sips?:[^\s@<>"]+@[^\s@<>"]+)$/;
/** cold: the caller is connected at once; warm: the caller is held while the person is briefed, then joined. */
export const TRANSFER_MODES = ['cold', 'warm'] as const;

@ObjectType({ description: 'A person or desk the agent may hand the call to (its transfer_call tool)' })
export class TransferDestination {
  @Field({ description: 'How the model names it: a value of transfer_call’s destination enum' })
  name!: string;

  @Field({ description: 'An E.164 number or a sip: URI' })
  number!: string;

  @Field(() => String, { nullable: true, description: 'When to transfer there, told to the model' })
  description!: string | null;

  @Field({ description: 'cold: the caller is connected at once; warm: the caller is held while the person hears the briefing, then joined' })
  mode!: string;

  @Field(() => String, {
    nullable: true,
    description: 'warm: what the person hears before the caller is joined (variables filled in), beside what the caller said',
  })
  briefing!: string | null;
}

@InputType({ description: 'A person or desk the agent may hand the call to' })
export class TransferDestinationInput {
  @Field({ description: '1 to 64 characters, unique among the agent’s destinations' })
  @Length(1, 64)
  @IsString()
  name!: string;

  @Field({ description: 'An E.164 number (+14155550100) or a sip: URI (sip:desk@pbx.example.com), at most 256 characters' })
  @Matches(TRANSFER_NUMBER, { message: 'number must be an E.164 number (+14155550100) or a sip: URI (sip:desk@pbx.example.com)' })
  @MaxLength(256)
  @IsString()
  number!: string;

  @Field(() => String, { nullable: true, description: 'When to transfer there, told to the model; at most 500 characters' })
  @IsOptional()
  @MaxLength(500)
  @IsString()
  description?: string | null;

  @Field(() => String, { nullable: true, description: 'cold (the default) or warm (the person is briefed while the caller holds)' })
  @IsOptional()
  @IsIn(TRANSFER_MODES, { message: 'mode must be cold or warm' })
  @IsString()
  mode?: string | null;

  @Field(() => String, { nullable: true, description: 'warm: what the person hears first ({{variables}} filled in); at most 500 characters' })
  @IsOptional()
  @MaxLength(500)
  @IsString()
  briefing?: string | null;
}

/** The rule of transferDestinations, for CreateAgentInput and UpdateAgentInput. */
export const transferDestinationRules = () =>
  Rules(
    ValidateNested({ each: true }),
    Type(() => TransferDestinationInput),
    ArrayMaxSize(MAX_TRANSFER_DESTINATIONS),
    IsArray(),
  );

/** The destinations as stored; a repeated name → 400 naming the second one (the model could not tell them apart). */
export function toTransferDestinations(input: TransferDestinationInput[] | undefined): TransferDestination[] {
  const seen = new Set<string>();
  return (input ?? []).map((destination, index) => {
    const name = destination.name.trim();
    if (!name || seen.has(name)) {
      throw AppError.badInput([
        { field: `transferDestinations.${index}.name`, message: name ? `name ${name} is already a destination of this agent` : 'name must not be blank' },
      ]);
    }
    seen.add(name);
    return {
      name,
      number: destination.number,
      description: destination.description ?? null,
      mode: destination.mode ?? 'cold',
      briefing: destination.briefing ?? null,
    };
  });
}
