import { IsEnum, IsOptional, IsString, Length } from 'class-validator';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { TeamRole } from './team.types.js';

@InputType({ description: 'A new team' })
export class CreateTeamInput {
  @Field({ description: '1 to 255 characters, unique in the organization' })
  @Length(1, 255)
  @IsString()
  name!: string;
}

@InputType({ description: 'Changes to a team; fields left out keep their values' })
export class UpdateTeamInput {
  @Field({ nullable: true, description: '1 to 255 characters, unique in the organization' })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;
}

/** The REST body of a new membership and the GraphQL arguments after teamId. */
@ArgsType()
export class AddTeamMemberInput {
  @Field(() => ID, { description: 'A user of the organization' })
  @IsString()
  userId!: string;

  @Field(() => TeamRole, { nullable: true, description: 'Default member' })
  @IsOptional()
  @IsEnum(TeamRole)
  role?: TeamRole | null;
}
