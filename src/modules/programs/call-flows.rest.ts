import { CallFlow } from './call-flow.entity.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { CreateCallFlowInput, UpdateCallFlowInput } from './call-flow.inputs.js';
import type { CallFlowService } from './call-flow.service.js';

/** The services this route table calls. */
export type RouteServices = { callFlows: CallFlowService };
const defineRoute = routesUsing<RouteServices>();

/** Call flows: not in the interface's table; shaped like its other resources. */
export const callFlowRoutes = [
  defineRoute({
    method: 'get',
    path: '/call-flows',
    operationId: 'listCallFlows',
    summary: 'A page of call flows: {data, meta}; search matches name or description',
    tag: 'Call flows',
    query: PageArgs,
    response: ref('CallFlowPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('CallFlowPage', CallFlow, {
        json: (row) => services.callFlows.listJson(actor, query, row),
        rows: () => services.callFlows.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/call-flows',
    operationId: 'createCallFlow',
    summary: 'Create a call flow: 1 to 200 nodes with unique ids, exactly one start node, edges between existing nodes',
    tag: 'Call flows',
    body: CreateCallFlowInput,
    status: 201,
    response: ref('CallFlow'),
    errors: [404],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('CallFlow', await services.callFlows.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/call-flows/{id}',
    operationId: 'getCallFlow',
    summary: 'Read a call flow',
    tag: 'Call flows',
    response: ref('CallFlow'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('CallFlow', await services.callFlows.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/call-flows/{id}',
    operationId: 'updateCallFlow',
    summary:
      'Change the fields that are sent; nodes and edges are checked together. A change that would leave an active program using the flow unable to run: 409',
    tag: 'Call flows',
    body: UpdateCallFlowInput,
    response: ref('CallFlow'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('CallFlow', await services.callFlows.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/call-flows/{id}',
    operationId: 'deleteCallFlow',
    summary: 'Delete a call flow; programs that used it keep their record without a flow',
    tag: 'Call flows',
    status: 204,
    errors: [404],
    async handler({ actor, params, services }) {
      await services.callFlows.delete(actor, params.id!);
    },
  }),
];
