import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { AgentListArgs, MessageArgs } from './agent.args.js';
import { CreateAgentInput } from './agent.inputs.js';
import { UpdateAgentInput } from './update-agent.inputs.js';
import type { AgentService } from './agent.service.js';
import { Agent } from './agent.entity.js';

/** The services this route table calls. */
export type RouteServices = { agents: AgentService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Agents';

/** Endpoints 1–5 of the interface, plus read and update so REST can do what GraphQL can. */
export const agentRoutes = [
  defineRoute({
    method: 'post',
    path: '/agents',
    operationId: 'createAgent',
    summary: 'Create an agent (a draft at version 1)',
    tag: TAG,
    body: CreateAgentInput,
    status: 201,
    response: ref('Agent'),
    errors: [404],
    idempotent: true,
    async handler({ actor, body, services, presenter }) {
      return presenter.present('Agent', await services.agents.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents',
    operationId: 'listAgents',
    summary: 'List agents; archived ones only with status=archived',
    tag: TAG,
    query: AgentListArgs,
    response: ref('AgentPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('AgentPage', Agent, {
        json: (row) => services.agents.listJson(actor, query, row),
        rows: () => services.agents.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/agents/{id}',
    operationId: 'getAgent',
    summary: 'Read an agent',
    tag: TAG,
    response: ref('Agent'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Agent', await services.agents.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/agents/{id}',
    operationId: 'updateAgent',
    summary:
      'Change the fields that are sent; the version goes up by one. A change of the model or voice that would leave an active program unable to run: 409',
    tag: TAG,
    body: UpdateAgentInput,
    response: ref('Agent'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('Agent', await services.agents.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/agents/{id}/activate',
    operationId: 'activateAgent',
    summary: 'Activate a draft agent; from active or archived: 409',
    tag: TAG,
    response: ref('Agent'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Agent', await services.agents.activate(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/agents/{id}',
    operationId: 'deleteAgent',
    summary: 'Soft delete: the agent is archived with a deletedAt, its record kept; 409 naming the active programs and numbers that still call through it',
    tag: TAG,
    response: ref('Agent'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Agent', await services.agents.delete(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/agents/{id}/test',
    operationId: 'testAgent',
    summary: 'Send one test message to the agent, with values for its variables; nothing is stored',
    tag: TAG,
    body: MessageArgs,
    response: ref('MessageReply'),
    errors: [404, 409, 503],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('MessageReply', await services.agents.test(actor, params.id!, body.message, body.variables));
    },
  }),
];
