import type { Actor } from '../../common/actor.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import type { Presenter } from '../../rest/present.js';
import type { Team } from './team.entity.js';
import { AddTeamMemberInput, CreateTeamInput, UpdateTeamInput } from './team.inputs.js';
import type { TeamService } from './team.service.js';

/** The services this route table calls. */
export type RouteServices = { teams: TeamService };
const defineRoute = routesUsing<RouteServices>();

/** Teams as GraphQL shows them, members included (loaded for all the teams at once). */
async function presentTeams(services: RouteServices, presenter: Presenter, actor: Actor, teams: Team[]) {
  const members = await services.teams.membersOf(
    actor,
    teams.map((team) => team.id),
  );
  return teams.map((team) => ({
    ...(presenter.present('Team', team) as Record<string, unknown>),
    members: (members.get(team.id) ?? []).map((member) => presenter.present('TeamMember', member)),
  }));
}

/** Teams; reading is open to the organization, changes are for owners and admins (403 otherwise). */
export const teamRoutes = [
  defineRoute({
    method: 'get',
    path: '/teams',
    operationId: 'listTeams',
    summary: 'A page of teams with their members: {data, meta}; search matches the name',
    tag: 'Teams',
    query: PageArgs,
    response: ref('TeamPage'),
    async handler({ actor, query, services, presenter }) {
      const page = await services.teams.list(actor, query);
      return { data: await presentTeams(services, presenter, actor, page.data), meta: page.meta };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/teams',
    operationId: 'createTeam',
    summary: 'Create a team; a name already in the organization → 409',
    tag: 'Teams',
    body: CreateTeamInput,
    status: 201,
    response: ref('Team'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return (await presentTeams(services, presenter, actor, [await services.teams.create(actor, body)]))[0];
    },
  }),
  defineRoute({
    method: 'get',
    path: '/teams/{id}',
    operationId: 'getTeam',
    summary: 'Read a team with its members',
    tag: 'Teams',
    response: ref('Team'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return (await presentTeams(services, presenter, actor, [await services.teams.get(actor, params.id!)]))[0];
    },
  }),
  defineRoute({
    method: 'put',
    path: '/teams/{id}',
    operationId: 'updateTeam',
    summary: 'Change the fields that are sent; the others keep their values',
    tag: 'Teams',
    body: UpdateTeamInput,
    response: ref('Team'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return (await presentTeams(services, presenter, actor, [await services.teams.update(actor, params.id!, body)]))[0];
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/teams/{id}',
    operationId: 'deleteTeam',
    summary: 'Delete a team and its memberships (the users stay)',
    tag: 'Teams',
    status: 204,
    errors: [403, 404],
    async handler({ actor, params, services }) {
      await services.teams.delete(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/teams/{teamId}/members',
    operationId: 'addTeamMember',
    summary: 'Add a user of the organization to the team (or change their role); answers the team',
    tag: 'Teams',
    body: AddTeamMemberInput,
    response: ref('Team'),
    errors: [403, 404],
    async handler({ actor, params, body, services, presenter }) {
      return (await presentTeams(services, presenter, actor, [await services.teams.addMember(actor, params.teamId!, body)]))[0];
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/teams/{teamId}/members/{userId}',
    operationId: 'removeTeamMember',
    summary: 'Remove a user from the team; 204 with no body',
    tag: 'Teams',
    status: 204,
    errors: [403, 404],
    async handler({ actor, params, services }) {
      await services.teams.removeMember(actor, params.teamId!, params.userId!);
    },
  }),
];
