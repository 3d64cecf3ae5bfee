import type { FlowEdge, FlowNode } from '../call-flow.types.js';

export type CallOutcome = 'answered' | 'no_answer' | 'busy' | 'failed' | 'voicemail';

export const CALL_OUTCOMES: readonly CallOutcome[] = ['answered', 'no_answer', 'busy', 'failed', 'voicemail'];

/** Answered and voicemail end a contact's calls; the others may be retried. */
export function isFinalOutcome(outcome: CallOutcome): boolean {
  return outcome === 'answered' || outcome === 'voicemail';
}

/**
 * Whether a call with this outcome reaches flow nodes: only a call that connected (answered, or a
 * voicemail) is heard, so only such a call reaches any node, the start node included. A call that
 * was not answered, was busy or failed reaches none, even over an edge without a condition.
 */
export function reachesNodes(outcome: CallOutcome): boolean {
  return outcome === 'answered' || outcome === 'voicemail';
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
