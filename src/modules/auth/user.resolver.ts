import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from './auth.types.js';
import { AddUserInput, UpdateUserRoleInput } from './user.inputs.js';
import { AddedUser, OrganizationUser, OrganizationUserPage } from './user.types.js';

@Resolver(() => OrganizationUser)
export class UserResolver {
  @Query(() => OrganizationUserPage, { description: 'A page of the organization’s users; search matches email or name' })
  users(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<OrganizationUser>> {
    return context.services.users.list(actorOf(context), args);
  }

  @Mutation(() => AddedUser, { description: 'Owner only; the answer carries the user’s first API key, its secret shown only this once' })
  addUser(@Arg('input') input: AddUserInput, @Ctx() context: GraphQLContext): Promise<AddedUser> {
    return context.services.users.add(actorOf(context), input);
  }

  @Mutation(() => OrganizationUser, { description: 'Owner only; the last owner cannot be demoted' })
  updateUserRole(
    @Arg('id', () => ID) id: string,
    @Args(() => UpdateUserRoleInput) input: UpdateUserRoleInput,
    @Ctx() context: GraphQLContext,
  ): Promise<OrganizationUser> {
    return context.services.users.updateRole(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner only; removes the user and its API keys; the last owner cannot be removed' })
  removeUser(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    return context.services.users.remove(actorOf(context), id);
  }
}
