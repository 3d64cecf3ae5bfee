import { IsEmail, IsEnum, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { ArgsType, Field, InputType } from 'type-graphql';
import { UserRole } from './user.types.js';

@InputType({ description: 'A user to add to the caller’s organization' })
export class AddUserInput {
  @Field({ description: 'An email address, unique in the organization (compared in lower case)' })
  @MaxLength(320)
  @IsEmail({}, { message: 'email must be an email address' })
  @IsString()
  email!: string;

  @Field(() => String, { nullable: true, description: '1 to 255 characters; the part of the email before @ when absent' })
  @IsOptional()
  @Length(1, 255)
  @IsString()
  name?: string | null;

  @Field(() => UserRole)
  @IsEnum(UserRole, { message: 'role must be one of owner, admin, member' })
  role!: UserRole;
}

/** The REST body of a role change and the GraphQL argument after the id. */
@ArgsType()
export class UpdateUserRoleInput {
  @Field(() => UserRole)
  @IsEnum(UserRole, { message: 'role must be one of owner, admin, member' })
  role!: UserRole;
}
