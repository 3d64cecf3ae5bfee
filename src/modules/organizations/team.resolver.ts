import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { DeletionResult } from '../auth/auth.types.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { Team } from './team.entity.js';
import { AddTeamMemberInput, CreateTeamInput, UpdateTeamInput } from './team.inputs.js';
import { TeamMember, TeamPage } from './team.types.js';
import { PageArgs, type Page } from '../../common/pagination.js';

@Resolver(() => Team)
export class TeamResolver {
  @Query(() => TeamPage, { description: 'A page of the organization’s teams; search matches the name' })
  teams(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<Team>> {
    return context.services.teams.list(actorOf(context), args);
  }

  @Query(() => Team)
  team(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Team> {
    return context.services.teams.get(actorOf(context), id);
  }

  @FieldResolver(() => [TeamMember], { description: 'Oldest membership first' })
  members(@Root() team: Team, @Ctx() context: GraphQLContext): Promise<TeamMember[]> {
    return loadersOf(context).teams.members.load(team.id);
  }

  @Mutation(() => Team, { description: 'Owner or admin only; the name must be free in the organization' })
  createTeam(@Arg('input') input: CreateTeamInput, @Ctx() context: GraphQLContext): Promise<Team> {
    return context.services.teams.create(actorOf(context), input);
  }

  @Mutation(() => Team, { description: 'Owner or admin only; changes only the fields that are sent' })
  updateTeam(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateTeamInput, @Ctx() context: GraphQLContext): Promise<Team> {
    return context.services.teams.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner or admin only; deletes the team and its memberships' })
  async deleteTeam(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.teams.delete(actorOf(context), id);
    return { id, message: `Team ${id} deleted` };
  }

  @Mutation(() => Team, { description: 'Owner or admin only; a user already in the team gets the new role' })
  addTeamMember(
    @Arg('teamId', () => ID) teamId: string,
    @Args(() => AddTeamMemberInput) input: AddTeamMemberInput,
    @Ctx() context: GraphQLContext,
  ): Promise<Team> {
    return context.services.teams.addMember(actorOf(context), teamId, input);
  }

  @Mutation(() => Team, { description: 'Owner or admin only' })
  removeTeamMember(@Arg('teamId', () => ID) teamId: string, @Arg('userId', () => ID) userId: string, @Ctx() context: GraphQLContext): Promise<Team> {
    return context.services.teams.removeMember(actorOf(context), teamId, userId);
  }
}
