import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { AddUserInput, UpdateUserRoleInput } from './user.inputs.js';
import type { UserService } from './user.service.js';

/** The services this route table calls. */
export type RouteServices = { users: UserService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Users';

/** The users of the caller's organization; everyone reads, only owners change. */
export const userRoutes = [
  defineRoute({
    method: 'get',
    path: '/users',
    operationId: 'listUsers',
    summary: 'A page of the organization’s users with their roles: {data, meta}; search matches email or name',
    tag: TAG,
    query: PageArgs,
    response: ref('OrganizationUserPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('OrganizationUserPage', await services.users.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/users',
    operationId: 'addUser',
    summary: 'Add a user with a role; owner only. The answer carries the user’s first API key, its secret shown only this once',
    tag: TAG,
    body: AddUserInput,
    status: 201,
    response: ref('AddedUser'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('AddedUser', await services.users.add(actor, body));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/users/{id}',
    operationId: 'updateUserRole',
    summary: 'Change a user’s role; owner only; the last owner cannot be demoted (409)',
    tag: TAG,
    body: UpdateUserRoleInput,
    response: ref('OrganizationUser'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('OrganizationUser', await services.users.updateRole(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/users/{id}',
    operationId: 'removeUser',
    summary: 'Remove a user and its API keys; owner only; the last owner cannot be removed (409); 204 with no body',
    tag: TAG,
    status: 204,
    errors: [403, 404, 409],
    async handler({ actor, params, services }) {
      await services.users.remove(actor, params.id!);
    },
  }),
];
