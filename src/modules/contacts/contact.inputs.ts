import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
// The decorator's own file: the package's index also loads its schema converters and lodash, which
// only the OpenAPI document needs (src/rest/openapi.ts, loaded on the first ask for it).
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { IsTimeZone } from './time-zone.js';

export const E164 = /^\+[1-9]\d{6,14}$/;
const PHONE_MESSAGE = 'phone must be an E.164 number such as +14155550100';
// The OpenAPI generator cannot read a custom validator or the element class of a nested array.
const TIME_ZONE_SCHEMA = () => ({ type: 'string' as const, description: 'IANA time zone, for example Europe/Paris' });
const CONTACT_LIST_SCHEMA = { items: { $ref: '#/components/schemas/CreateContactInput' } };

@InputType({ description: 'A new contact' })
export class CreateContactInput {
  @Field(() => String, { nullable: true, description: 'Full name, 1 to 255 characters' })
  @IsOptional()
  @Length(1, 255)
  @IsString()
  name?: string | null;

  @Field({ description: 'E.164: + and 7 to 15 digits' })
  @Matches(E164, { message: PHONE_MESSAGE })
  @IsString()
  phone!: string;

  @Field(() => String, { nullable: true, description: 'IANA time zone, for example Europe/Paris' })
  @JSONSchema(TIME_ZONE_SCHEMA)
  @IsOptional()
  @IsTimeZone()
  @IsString()
  timeZone?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Free-form attributes' })
  @OptionalNonNull()
  @IsObject()
  attributes?: Record<string, unknown>;

  @Field({ nullable: true, description: 'Default false' })
  @OptionalNonNull()
  @IsBoolean()
  optedOut?: boolean;
}

@InputType({ description: 'Changes to a contact; fields left out keep their values' })
export class UpdateContactInput {
  @Field(() => String, { nullable: true, description: 'null removes the name' })
  @IsOptional()
  @Length(1, 255)
  @IsString()
  name?: string | null;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Matches(E164, { message: PHONE_MESSAGE })
  @IsString()
  phone?: string;

  @Field(() => String, { nullable: true, description: 'null removes the time zone' })
  @JSONSchema(TIME_ZONE_SCHEMA)
  @IsOptional()
  @IsTimeZone()
  @IsString()
  timeZone?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Replaces the attributes' })
  @OptionalNonNull()
  @IsObject()
  attributes?: Record<string, unknown>;

  @Field({ nullable: true })
  @OptionalNonNull()
  @IsBoolean()
  optedOut?: boolean;
}

@InputType({ description: 'Contacts written all together or not at all' })
export class ImportContactsInput {
  @Field(() => [CreateContactInput], { description: '1 to 10000 contacts' })
  @JSONSchema(CONTACT_LIST_SCHEMA)
  @ValidateNested({ each: true })
  @Type(() => CreateContactInput)
  @ArrayMaxSize(10_000)
  @ArrayMinSize(1)
  @IsArray()
  contacts!: CreateContactInput[];
}
