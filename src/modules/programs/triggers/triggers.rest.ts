import { setPageHeaders } from '../../../rest/array-page.js';
import type { Presenter } from '../../../rest/present.js';
import { routesUsing } from '../../../rest/routes.js';
import { arrayOf, type JsonSchema, ref } from '../../../rest/json-schema.js';
import type { ContactTrigger } from '../contact-trigger.entity.js';
import { showRelations, type ProgramRelationServices } from '../programs.rest.js';
import { TriggerListArgs } from './trigger.args.js';
import { TRIGGER_FIELDS } from './trigger.types.js';
import type { TriggerService } from './trigger.service.js';

/** The services this route table calls. */
export type RouteServices = ProgramRelationServices & { triggers: TriggerService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Programs';
const NULLABLE = new Set<string>(['contactName', 'triggeredAt']);

/** The interface's trigger object: exactly its fields (the GraphQL type also has updatedAt). */
const TRIGGER_SCHEMA: JsonSchema = {
  type: 'object',
  properties: Object.fromEntries(
    TRIGGER_FIELDS.map((field) => {
      const base: JsonSchema =
        field === 'status'
          ? { type: 'string', enum: ['pending', 'triggered', 'cancelled'] }
          : { type: 'string', ...(field.endsWith('At') ? { format: 'date-time' } : {}) };
      return [field, NULLABLE.has(field) ? { anyOf: [base, { type: 'null' }] } : base];
    }),
  ),
  required: [...TRIGGER_FIELDS],
  additionalProperties: false,
};

function presentTrigger(presenter: Presenter, trigger: ContactTrigger): Record<string, unknown> {
  const shown = presenter.present('ContactTrigger', trigger) as Record<string, unknown>;
  return Object.fromEntries(TRIGGER_FIELDS.map((field) => [field, shown[field] ?? null]));
}

/** Endpoint 8, and the operator's resync. */
export const triggerRoutes = [
  defineRoute({
    method: 'get',
    path: '/programs/{programId}/triggers',
    operationId: 'listTriggers',
    summary:
      "A page of a live program's contact triggers by triggerAt, a JSON array ([] for a campaign program); the total in X-Total-Count, the neighbours in Link, the next page's cursor in X-Next-Cursor",
    tag: TAG,
    query: TriggerListArgs,
    pageHeaders: true,
    response: arrayOf(TRIGGER_SCHEMA),
    errors: [404],
    async handler({ actor, params, query, services, presenter, req, res }) {
      const page = await services.triggers.list(actor, params.programId!, query);
      setPageHeaders(req, res, page);
      return page.data.map((trigger) => presentTrigger(presenter, trigger));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/programs/{programId}/triggers/sync',
    operationId: 'syncProgramTriggers',
    summary: "Brings a live program's triggers in line with its audience and contacts now",
    tag: TAG,
    response: ref('TriggerSync'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const result = await services.triggers.sync(actor, params.programId!);
      await showRelations(services, actor, [result.program]);
      return presenter.present('TriggerSync', result);
    },
  }),
];
