import type { FlowEdge, FlowNode } from '../call-flow.types.js';

/** What a (simulated) dialer decides of a call: who, if anyone, picks up. */
export type DialedOutcome = 'answered' | 'no_answer' | 'busy' | 'failed' | 'voicemail';

/** A call's outcome: a dialed one, or voicemail_left (a machine answered and the program's message was left after the beep). */
export type CallOutcome = DialedOutcome | 'voicemail_left';

export const CALL_OUTCOMES: readonly DialedOutcome[] = ['answered', 'no_answer', 'busy', 'failed', 'voicemail'];

/** Answered and voicemail (a message left or not) end a contact's calls; the others may be retried. */
export function isFinalOutcome(outcome: CallOutcome): boolean {
  return outcome === 'answered' || outcome === 'voicemail' || outcome === 'voicemail_left';
}

/**
 * Whether a call with this outcome reaches flow nodes: only a call that connected (answered, or a
 * voicemail) is heard, so only such a call reaches any node, the start node included. A call that
 * was not answered, was busy or failed reaches none, even over an edge without a condition.
 */
export function reachesNodes(outcome: CallOutcome): boolean {
  return isFinalOutcome(outcome);
}

export interface CallRequest {
  executionContactId: string;
  /** E.164 */
  phone: string;
  /** IANA zone of the contact, null when it has none. */
  timeZone: string | null;
  /** 1 for the first call of this contact in the execution. */
  attempt: number;
  /** The flow the call walks; null for a program that speaks through a single agent. */
  flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null;
  agentId: string | null;
}

export interface CallResult {
  outcome: CallOutcome;
  /** Flow node ids the call reached, in order. */
  reachedNodeIds: string[];
  durationSeconds: number;
}

/** The seam for a real carrier: the runner places every call through this. */
export interface Dialer {
  placeCall(call: CallRequest): Promise<CallResult>;
}
