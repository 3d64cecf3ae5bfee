import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import { CreatedApiKey } from './api-key.entity.js';

/** A user's role in the organization; what each may do is PERMISSIONS in organizations/roles.ts. */
export enum UserRole {
  owner = 'owner',
  admin = 'admin',
  member = 'member',
}
registerEnumType(UserRole, {
  name: 'UserRole',
  description: 'owner: everything; admin: all but the organization and its users; member: reads and talks to agents',
  valuesConfig: {
    owner: { description: 'Everything, including renaming the organization and managing its users' },
    admin: { description: 'Everything but the organization and its users' },
    member: { description: 'Reads, talks to agents and manages its own API keys' },
  },
});

@ObjectType({ description: 'A user of the caller’s organization, with its role' })
export class OrganizationUser {
  @Field(() => ID) id!: string;
  @Field() email!: string;
  @Field() name!: string;
  @Field(() => UserRole) role!: UserRole;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}

export const OrganizationUserPage = createPageType(OrganizationUser, 'OrganizationUserPage');

@ObjectType({ description: 'A user just added, with its first API key; the key’s secret is shown only in this answer' })
export class AddedUser {
  @Field(() => OrganizationUser) user!: OrganizationUser;
  @Field(() => CreatedApiKey) apiKey!: CreatedApiKey;
}
