import { CursorPageArgs } from '../../common/pagination.js';
import { setPageHeaders } from '../../rest/array-page.js';
import { type RouteDefinition, routesUsing } from '../../rest/routes.js';
import type { ControlAction } from './execution-state.js';
import { CreateExecutionInput } from './program.inputs.js';
import { EXECUTION_FIELDS, EXECUTION_JSON_SCHEMA, executionJson } from './programs.types.js';
import { Execution } from './execution.entity.js';
import type { ExecutionService } from './execution.service.js';

/** The services this route table calls. */
export type RouteServices = { executions: ExecutionService };
const defineRoute = routesUsing<RouteServices>();

const CONTROLS: [ControlAction, string][] = [
  ['start', 'scheduled → running'],
  ['pause', 'running → paused'],
  ['resume', 'any paused state → running'],
  ['stop', 'running or paused → stopped; pending contacts are never dialed'],
  ['cancel', 'scheduled → cancelled'],
];

/** Endpoint 9 and the execution operations around it; executions show exactly the interface's fields. */
export const executionRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/programs/{programId}/executions',
    operationId: 'listExecutions',
    summary:
      'A page of the program’s executions, newest first: a JSON array; the total in X-Total-Count, the neighbours in Link, the next page’s cursor in X-Next-Cursor',
    tag: 'Executions',
    query: CursorPageArgs,
    pageHeaders: true,
    response: { type: 'array', items: EXECUTION_JSON_SCHEMA },
    errors: [404],
    async handler({ actor, params, query, services, presenter, req, res }) {
      // Written as JSON by the database when the fields compile (src/rest/present-sql.ts); else read and shaped here.
      const row = presenter.rowJson('Execution', Execution, EXECUTION_FIELDS);
      if (row) {
        const page = await services.executions.listForProgramJson(actor, params.programId!, query, row);
        setPageHeaders(req, res, page);
        return presenter.jsonArray(page.json);
      }
      const page = await services.executions.listForProgram(actor, params.programId!, query);
      setPageHeaders(req, res, page);
      return page.data.map(executionJson);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/programs/{programId}/executions',
    operationId: 'createExecution',
    summary: 'A scheduled execution of an active campaign over its audience’s contacts that have not opted out; 409 otherwise',
    tag: 'Executions',
    body: CreateExecutionInput,
    status: 201,
    response: EXECUTION_JSON_SCHEMA,
    errors: [404, 409],
    idempotent: true,
    async handler({ actor, params, body, services }) {
      return executionJson(await services.executions.create(actor, params.programId!, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/executions/{id}',
    operationId: 'getExecution',
    summary: 'Read an execution',
    tag: 'Executions',
    response: EXECUTION_JSON_SCHEMA,
    errors: [404],
    async handler({ actor, params, services }) {
      return executionJson(await services.executions.get(actor, params.id!));
    },
  }),
  ...CONTROLS.map(([action, summary]) =>
    defineRoute({
      method: 'post',
      path: `/executions/{id}/${action}`,
      operationId: `${action}Execution`,
      summary: `${summary}; a move the state machine forbids is 409`,
      tag: 'Executions',
      response: EXECUTION_JSON_SCHEMA,
      errors: [404, 409],
      async handler({ actor, params, services }) {
        return executionJson(await services.executions.control(actor, params.id!, action));
      },
    }),
  ),
];
