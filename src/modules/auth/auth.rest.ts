import { CursorPageArgs } from '../../common/pagination.js';
import { setPageHeaders } from '../../rest/array-page.js';
import { routesUsing } from '../../rest/routes.js';
import { arrayOf, objectOf, ref } from '../../rest/json-schema.js';
import { CreateApiKeyInput, UpdateApiKeyInput } from './api-key.inputs.js';
import type { ApiKeyService } from './api-key.service.js';
import type { AuthService } from './auth.service.js';
import type { TokenService } from './token.service.js';

/** The services this route table calls. */
export type RouteServices = { apiKeys: ApiKeyService; auth: AuthService; tokens: TokenService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Authentication';

/** Endpoints 13–18 of the interface, and the token exchange of CONTRACT.md §4. */
export const authRoutes = [
  defineRoute({
    method: 'post',
    path: '/auth/token',
    operationId: 'createAccessToken',
    summary: 'Exchange an API key (x-api-key) for a bearer token',
    tag: TAG,
    response: ref('AccessToken'),
    async handler({ actor, services, presenter }) {
      return presenter.present('AccessToken', services.tokens.exchange(actor));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/auth/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an API key; the answer carries its secret, shown only this once',
    tag: TAG,
    body: CreateApiKeyInput,
    status: 201,
    response: ref('CreatedApiKey'),
    idempotent: true,
    async handler({ actor, body, services, presenter }) {
      return presenter.present('CreatedApiKey', await services.apiKeys.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/auth/api-keys',
    operationId: 'listApiKeys',
    summary:
      "A page of the caller's API keys, newest first, as {apiKeys} (never with their secret); the total in X-Total-Count, the neighbours in Link, the next page's cursor in X-Next-Cursor",
    tag: TAG,
    query: CursorPageArgs,
    pageHeaders: true,
    response: objectOf({ apiKeys: arrayOf(ref('ApiKey')) }),
    async handler({ actor, query, services, presenter, req, res }) {
      const page = await services.apiKeys.list(actor, query);
      setPageHeaders(req, res, page);
      return { apiKeys: page.data.map((key) => presenter.present('ApiKey', key)) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/auth/api-keys/{id}',
    operationId: 'getApiKey',
    summary: 'Read an API key (never with its secret)',
    tag: TAG,
    response: ref('ApiKey'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('ApiKey', await services.apiKeys.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/auth/api-keys/{id}',
    operationId: 'updateApiKey',
    summary: 'Change the fields that are sent; the others keep their values',
    tag: TAG,
    body: UpdateApiKeyInput,
    response: ref('ApiKey'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('ApiKey', await services.apiKeys.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/auth/api-keys/{id}',
    operationId: 'deleteApiKey',
    summary: 'Delete an API key',
    tag: TAG,
    response: objectOf({ message: { type: 'string' } }),
    errors: [404],
    async handler({ actor, params, services }) {
      const { message } = await services.apiKeys.delete(actor, params.id!);
      return { message };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/users/me',
    operationId: 'getMe',
    summary: 'The caller; used to verify a key or token',
    tag: 'Users',
    response: ref('CurrentUser'),
    async handler({ actor, services, presenter }) {
      return presenter.present('CurrentUser', await services.auth.me(actor));
    },
  }),
];
