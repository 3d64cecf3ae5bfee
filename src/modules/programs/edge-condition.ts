/**
 * What an edge of a call flow may wait for. Outcome labels are how the call was answered (or
 * not); the rest are what happened at an `ask` node: a key pressed, words said, the agent's
 * resolution criteria judged met or not, or no input after the reprompt.
 */
export type EdgeCondition =
  | { kind: 'outcome'; outcome: string }
  | { kind: 'digit'; digit: string }
  | { kind: 'said'; words: string }
  | { kind: 'resolved' }
  | { kind: 'unresolved' }
  | { kind: 'no_input' };

const OUTCOMES = new Set(['answered', 'voicemail', 'no_answer', 'busy', 'failed']);

export const EDGE_CONDITION_HINT =
  'a condition is answered, voicemail, no_answer, busy, failed, digit:<one of 0-9 * #>, said:<words>, resolved, unresolved or no_input';

export function parseEdgeCondition(condition: string): EdgeCondition | null {
  const text = condition.trim();
  if (OUTCOMES.has(text)) return { kind: 'outcome', outcome: text };
  if (text === 'resolved' || text === 'unresolved' || text === 'no_input') return { kind: text };
  const digit = /^digit:([0-9*#])$/.exec(text);
  if (digit) return { kind: 'digit', digit: digit[1]! };
  const said = /^said:(.*\S.*)$/.exec(text);
  if (said) return { kind: 'said', words: said[1]!.trim().toLowerCase() };
  return null;
}

export function isEdgeCondition(condition: string): boolean {
  return parseEdgeCondition(condition) !== null;
}

/** What happened at a node, for matching its edges. */
export interface NodeEvent {
  outcome?: string;
  digits?: string | null;
  speech?: string | null;
  resolved?: boolean | null;
  noInput?: boolean;
}

/** Whether the edge's condition holds for what happened; an edge without a condition is the fallback, matched elsewhere. */
export function conditionHolds(condition: EdgeCondition, event: NodeEvent): boolean {
  switch (condition.kind) {
    case 'outcome':
      return event.outcome === condition.outcome;
    case 'digit':
      return (event.digits ?? '').startsWith(condition.digit);
    case 'said':
      return (event.speech ?? '').toLowerCase().replace(/\s+/g, ' ').includes(condition.words);
    case 'resolved':
      return event.resolved === true;
    case 'unresolved':
      return event.resolved === false;
    case 'no_input':
      return event.noInput === true;
  }
}
