import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { CreateWebCallInput } from './web-call.inputs.js';
import type { WebCallService } from './web-call.service.js';

/** The services this route table calls. */
export type RouteServices = { webCalls: WebCallService };
const defineRoute = routesUsing<RouteServices>();

/** Web calls: a person talks to an agent from a browser tab (docs/voice.md, Web calls from the browser). */
export const webCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/web-calls',
    operationId: 'createWebCall',
    summary: 'A web call to a streaming or speech-to-speech agent: a single-use token (5 minutes) and the /talk page that opens it',
    tag: 'Calls',
    status: 201,
    body: CreateWebCallInput,
    response: ref('WebCallTicket'),
    errors: [404, 409],
    async handler({ actor, body, services }) {
      const ticket = await services.webCalls.create(actor, body);
      return { ...ticket, expiresAt: ticket.expiresAt.toISOString() };
    },
  }),
];
