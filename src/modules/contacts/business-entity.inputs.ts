import { IsObject, IsOptional, IsString, Length } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { PageArgs } from '../../common/pagination.js';
import { OptionalNonNull } from '../../common/validation.js';

@InputType({ description: 'A new business record of a contact' })
export class CreateBusinessEntityInput {
  @Field(() => ID, { description: 'A contact of the organization' })
  @IsString()
  contactId!: string;

  @Field({ description: '1 to 64 characters, for example appointment' })
  @Length(1, 64)
  @IsString()
  type!: string;

  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Free-form attributes' })
  @OptionalNonNull()
  @IsObject()
  attributes?: Record<string, unknown>;
}

@InputType({ description: 'Changes to a business record; fields left out keep their values' })
export class UpdateBusinessEntityInput {
  @Field(() => ID, { nullable: true, description: 'Moves the record to another contact of the organization' })
  @OptionalNonNull()
  @IsString()
  contactId?: string;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 64)
  @IsString()
  type?: string;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Replaces the attributes' })
  @OptionalNonNull()
  @IsObject()
  attributes?: Record<string, unknown>;
}

/** The list: a page, optionally of one contact's records or of one type. */
@ArgsType()
export class BusinessEntityListArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only the records of this contact' })
  @IsOptional()
  @IsString()
  contactId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only records of this type' })
  @IsOptional()
  @Length(1, 64)
  @IsString()
  type?: string | null;
}
