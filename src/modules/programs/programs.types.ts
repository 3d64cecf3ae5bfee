import { registerEnumType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import type { Execution } from './execution.entity.js';
import { Program } from './program.entity.js';

export const ProgramPage = createPageType(Program, 'ProgramPage');

/** The moves a user asks for by name; each is checked by assertControl. */
export enum ExecutionAction {
  start = 'start',
  pause = 'pause',
  resume = 'resume',
  stop = 'stop',
  cancel = 'cancel',
}
registerEnumType(ExecutionAction, { name: 'ExecutionAction' });

/** Endpoint 9's fields, in the interface's order; the REST door shows exactly these. */
export const EXECUTION_FIELDS = [
  'id', 'programId', 'organizationId', 'audienceId', 'flowId', 'status',
  'totalContacts', 'contactsCompleted', 'contactsFailed', 'contactsPending', 'contactsInProgress',
  'scheduledStartAt', 'createdAt', 'updatedAt', 'scheduledStopAt', 'actualStartAt', 'actualEndAt', 'autoPauseRules',
] as const;

const DATE_FIELDS = new Set(['scheduledStartAt', 'createdAt', 'updatedAt', 'scheduledStopAt', 'actualStartAt', 'actualEndAt']);
const COUNTERS = new Set(['totalContacts', 'contactsCompleted', 'contactsFailed', 'contactsPending', 'contactsInProgress']);

/** An execution as the interface shows it: exactly EXECUTION_FIELDS, dates as ISO 8601. */
export function executionJson(execution: Execution): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of EXECUTION_FIELDS) {
    const value = execution[field];
    out[field] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  out.autoPauseRules = execution.autoPauseRules.map(({ nodeId, threshold, resetOnResume }) => ({ nodeId, threshold, resetOnResume }));
  return out;
}

/** The JSON schema of executionJson for the OpenAPI document. */
export const EXECUTION_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [...EXECUTION_FIELDS],
  properties: Object.fromEntries(
    EXECUTION_FIELDS.map((field) => {
      if (field === 'autoPauseRules') return [field, { type: 'array', items: { $ref: '#/components/schemas/AutoPauseRule' } }];
      if (field === 'status') return [field, { type: 'string' }];
      if (COUNTERS.has(field)) return [field, { type: 'integer' }];
      if (DATE_FIELDS.has(field)) {
        const required = field === 'createdAt' || field === 'updatedAt';
        return [field, required ? { type: 'string', format: 'date-time' } : { type: ['string', 'null'], format: 'date-time' }];
      }
      const nullable = field === 'audienceId' || field === 'flowId';
      return [field, { type: nullable ? ['string', 'null'] : 'string' }];
    }),
  ),
};
