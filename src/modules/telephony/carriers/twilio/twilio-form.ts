import type { GatherResult, InboundCall } from '../carrier-module.js';

// The answer requests of TwiML's verbs, whose form words TeXML (Telnyx) keeps too: <Gather>'s
// SpeechResult and Digits, and a call's CallSid, From and To.

export function twimlGathered(fields: Record<string, string>): GatherResult {
  return { speech: fields.SpeechResult ?? null, digits: fields.Digits ?? null };
}

export function twimlInbound(fields: Record<string, string>): InboundCall | null {
  const carrierCallId = fields.CallSid?.slice(0, 64) ?? '';
  return carrierCallId ? { carrierCallId, from: (fields.From ?? '').slice(0, 16) || null, to: fields.To ?? '' } : null;
}
