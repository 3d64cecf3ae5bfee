import { Field, ID, Int, ObjectType } from 'type-graphql';

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
