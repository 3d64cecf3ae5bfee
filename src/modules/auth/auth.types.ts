import { Field, ID, Int, ObjectType } from 'type-graphql';
import { UserRole } from './user.types.js';

@ObjectType({ description: 'The organization a user belongs to' })
export class OrganizationRef {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;
}

@ObjectType({ description: 'The caller: the user behind the key or token' })
export class CurrentUser {
  @Field(() => ID)
  id!: string;

  @Field()
  email!: string;

  @Field()
  name!: string;

  @Field(() => ID)
  organizationId!: string;

  @Field(() => OrganizationRef)
  organization!: OrganizationRef;

  @Field(() => UserRole, { description: 'The caller’s role in the organization, as it is now' })
  role!: UserRole;

  @Field(() => [String], {
    description:
      'What the role may do beyond reading, as names of the permission matrix (agents.manage, executions.control, users.manage, …; docs/security.md): a UI shows the controls of these and leaves out the others',
  })
  permissions!: string[];
}

@ObjectType({ description: 'The answer to a deletion' })
export class DeletionResult {
  @Field(() => ID)
  id!: string;

  @Field()
  message!: string;
}

@ObjectType({ description: 'A bearer token minted from an API key' })
export class AccessToken {
  @Field()
  accessToken!: string;

  @Field()
  tokenType!: string;

  @Field(() => Int, { description: 'Seconds until the token expires' })
  expiresIn!: number;
}
