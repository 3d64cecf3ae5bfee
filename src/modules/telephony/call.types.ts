import { createPageType } from '../../common/pagination.js';
import { arrayOf, objectOf, ref, refPicking } from '../../rest/json-schema.js';
import { Call } from './call.entity.js';
import { CallTurnLatency } from './call-latency.types.js';
import { CallAnalysis } from '../agents/analysis/analysis.types.js';
import { CallTransfer } from './call-transfer.types.js';
import { withEveryField } from '../../common/object-fields.js';

export const CallPage = createPageType(Call, 'CallPage');

/** The fields REST shows of a call, in this order; the claim and the queue row stay inside. */
export const CALL_FIELDS = [
  'id',
  'organizationId',
  'executionId',
  'programId',
  'contactId',
  'agentId',
  'conversationId',
  'direction',
  'from',
  'to',
  'status',
  'outcome',
  'answeredBy',
  'attempt',
  'carrier',
  'channel',
  'carrierConnectionId',
  'carrierCallId',
  'queuedAt',
  'answeredAt',
  'endedAt',
  'durationSeconds',
  'reachedNodeIds',
  'errorText',
  'creditsCharged',
  'turnLatency',
  'firstAudioMs',
  'analysis',
  'transfer',
  'createdAt',
  'updatedAt',
] as const;

/** A call as REST shows it: exactly CALL_FIELDS, dates as ISO 8601. */
export function callJson(call: Call): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of CALL_FIELDS) {
    const value = call[field];
    out[field] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  out.reachedNodeIds = [...call.reachedNodeIds];
  // Stored JSON: a speech-to-speech call's latency has no streaming shares, a pending analysis no summary.
  out.turnLatency = withEveryField(CallTurnLatency, call.turnLatency);
  out.analysis = withEveryField(CallAnalysis, call.analysis);
  out.transfer = withEveryField(CallTransfer, call.transfer);
  return out;
}

/**
 * REST's call: callJson's fields and the call's recording (null: none), as GraphQL's Call.recording;
 * the named component Call with only these fields. Events carry callJson alone.
 */
export const CALL_JSON_SCHEMA = refPicking('Call', [...CALL_FIELDS, 'recording']);
export const CALL_PAGE_JSON_SCHEMA = objectOf({ data: arrayOf(CALL_JSON_SCHEMA), meta: ref('PageMeta') });
