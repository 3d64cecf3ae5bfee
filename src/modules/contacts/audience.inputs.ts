import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsUUID } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { NamedRules, OptionalNonNull } from '../../common/validation.js';

@InputType({ description: 'A new audience' })
export class CreateAudienceInput {
  @Field({ description: '1 to 255 characters' })
  @NamedRules.name()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;
}

@InputType({ description: 'Changes to an audience; fields left out keep their values' })
export class UpdateAudienceInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @NamedRules.name()
  name?: string;

  @Field(() => String, { nullable: true, description: 'null removes the description' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;
}

/** REST body of the member routes; GraphQL takes the same list as the `contactIds` argument. */
@InputType({ description: 'Contacts to add to or remove from an audience' })
export class AudienceMembersInput {
  @Field(() => [ID], { description: '1 to 1000 contact ids of the organization' })
  @IsUUID('all', { each: true, message: 'each contactId must be a UUID' })
  @ArrayMaxSize(1000)
  @ArrayMinSize(1)
  @IsArray()
  contactIds!: string[];
}
