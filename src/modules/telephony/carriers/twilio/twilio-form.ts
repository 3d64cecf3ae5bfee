import type { DialOutcome, GatherResult, InboundCall } from '../carrier-module.js';

// The answer requests of TwiML's verbs, whose form words TeXML (Telnyx) keeps too: <Gather>'s
// SpeechResult and Digits, a call's CallSid, From and To, and a transfer's <Dial action> report
// (DialCallStatus, DialCallDuration) and a placed leg's final status callback (CallStatus, CallDuration).

export function twimlGathered(fields: Record<string, string>): GatherResult {
  return { speech: fields.SpeechResult ?? null, digits: fields.Digits ?? null };
}

export function twimlInbound(fields: Record<string, string>): InboundCall | null {
  const carrierCallId = fields.CallSid?.slice(0, 64) ?? '';
  return carrierCallId ? { carrierCallId, from: (fields.From ?? '').slice(0, 16) || null, to: fields.To ?? '' } : null;
}

/** The `<Dial action>` request's DialCallStatus (TwiML <Dial>: completed, answered, busy, no-answer, failed, canceled) and DialCallDuration. */
const DIAL_STATUSES = new Set(['completed', 'answered', 'busy', 'no-answer', 'failed', 'canceled']);
export function twimlDialOutcome(fields: Record<string, string>): DialOutcome | null {
  const status = fields.DialCallStatus ?? '';
  if (!fields.CallSid || !DIAL_STATUSES.has(status)) return null;
  const duration = Number(fields.DialCallDuration);
  return {
    carrierCallId: fields.CallSid,
    status,
    durationSeconds: fields.DialCallDuration && Number.isInteger(duration) && duration >= 0 ? duration : null,
    callStatus: fields.CallStatus || null,
  };
}

/** A warm transfer leg's final status callback (CallStatus completed, busy, no-answer, failed, canceled; CallDuration), as DialCallStatus words. */
const LEG_ENDS = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
export function twimlLegOutcome(fields: Record<string, string>): DialOutcome | null {
  const status = fields.CallStatus ?? '';
  if (!fields.CallSid || !LEG_ENDS.has(status)) return null;
  const duration = Number(fields.CallDuration);
  return {
    carrierCallId: fields.CallSid,
    status,
    durationSeconds: fields.CallDuration && Number.isInteger(duration) && duration >= 0 ? duration : null,
    callStatus: null,
  };
}
