import { routesUsing } from '../../rest/routes.js';
import { CALL_JSON_SCHEMA, callJson } from './call.types.js';
import type { DirectCallService } from './direct-call.service.js';
import { PlaceCallInput } from './direct-call.inputs.js';

/** The services this route table calls. */
export type RouteServices = { directCalls: DirectCallService };
const defineRoute = routesUsing<RouteServices>();

/** One call in one request (issue 42): the call record is created at once, the carrier's progress follows as events. */
export const directCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/calls',
    operationId: 'placeCall',
    summary: 'Place one outbound call now, to one number with an agent or a flow: 201 with the call record (status queued, 1 credit charged)',
    description:
      'The checks a campaign’s call gets, before anything is written: the agent (or every agent of the flow) is active and its model and voice pipeline can run; ' +
      'on a real carrier, `from` is one of the organization’s numbers with a connection of that carrier and PUBLIC_URL is set (409 otherwise); ' +
      'the number is not on the do-not-call list and is not an opted-out contact’s (409); every variable the agents’ templates use has a value, from `variables`, ' +
      'the contact whose number it is, or a default (409 naming them); one credit is spent (409 when there is none, refunded when the carrier never takes the call). ' +
      'At most DIRECT_CALLS_MAX single calls of an organization are live at once, and one per number (409). No calling window applies: the call is placed now. ' +
      'The answer is the call record, as GET /api/calls/{id} reads it; a runner places the call within a tick, and its progress arrives as call.started / call.ended events and webhooks, ' +
      'with its conversation (GET /api/calls/{id}, conversationId). An agentId, flowId or from of another organization answers 404.',
    tag: 'Calls',
    body: PlaceCallInput,
    status: 201,
    response: CALL_JSON_SCHEMA,
    errors: [404, 409],
    idempotent: true,
    async handler({ actor, body, services }) {
      return { ...callJson(await services.directCalls.place(actor, body)), recording: null };
    },
  }),
];
