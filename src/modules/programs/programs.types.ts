import { registerEnumType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import { refPicking } from '../../rest/json-schema.js';
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
registerEnumType(ExecutionAction, {
  name: 'ExecutionAction',
  description: 'A move of an execution a user asks for; one the state machine forbids is CONFLICT',
  valuesConfig: {
    start: { description: 'scheduled → running' },
    pause: { description: 'running → paused' },
    resume: { description: 'any paused state → running' },
    stop: { description: 'running or paused → stopped (final)' },
    cancel: { description: 'scheduled → cancelled (final)' },
  },
});

/** Endpoint 9's fields, in the interface's order; the REST door shows exactly these. */
export const EXECUTION_FIELDS = [
  'id',
  'programId',
  'organizationId',
  'audienceId',
  'flowId',
  'status',
  'totalContacts',
  'contactsCompleted',
  'contactsFailed',
  'contactsPending',
  'contactsInProgress',
  'scheduledStartAt',
  'createdAt',
  'updatedAt',
  'scheduledStopAt',
  'actualStartAt',
  'actualEndAt',
  'autoPauseRules',
  'creditsSpent',
  // Issue #25, past the interface's fields: the contacts not called because their number is on the do-not-call list,
  // and the finished contacts by outcome.
  'contactsDoNotCall',
  'outcomes',
  // Issue #40: the values of the agents' variables given at create.
  'variables',
  // Issue #41: why no (more) calls are placed now, and when the next one can be.
  'waitingReason',
  'nextCallAt',
] as const;

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

/** executionJson's schema: the GraphQL Execution type's fields that REST shows, as the named component Execution. */
export const EXECUTION_JSON_SCHEMA = refPicking('Execution', EXECUTION_FIELDS);
