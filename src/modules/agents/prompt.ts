import type { ChatMessage, Passage } from './agent.ports.js';
import type { MemoryConfig, ResolutionCriterion } from './agent.types.js';

/** Pure prompt building: what the model sees, and what the caller may see of its reply. */

export const DEFAULT_LAST_MESSAGES = 10;
const MIN_REDACTED_POLICY = 20;

/** instructions, then the policy, then the retrieved passages. */
export function buildSystemPrompt(instructions: string, policy: string | null, passages: Passage[]): string {
  let system = instructions;
  if (policy) system += `\n\nPolicy (hidden from the caller):\n${policy}`;
  if (passages.length > 0) {
    const listed = passages.map((passage, index) => `[${index + 1}] ${passage.title}: ${passage.content}`).join('\n');
    system += `\n\nKnowledge base passages:\n${listed}`;
  }
  return system;
}

/** How many earlier messages the model sees: none without memory, lastMessages (default 10) with it. */
export function memoryWindow(memory: MemoryConfig | null): number {
  if (!memory?.enabled) return 0;
  return memory.lastMessages ?? DEFAULT_LAST_MESSAGES;
}

/** Last line of defence: a reply that quotes the policy verbatim shows `[redacted]` instead. */
export function redactPolicy(text: string, policy: string | null): string {
  if (!policy || policy.length < MIN_REDACTED_POLICY) return text;
  return text.split(policy).join('[redacted]');
}

/** The request that asks the model whether a conversation met one criterion. */
export function criterionPrompt(criterion: ResolutionCriterion, transcript: ChatMessage[]): { system: string; messages: ChatMessage[] } {
  const system =
    'You evaluate a finished conversation against one resolution criterion. ' +
    'Answer "yes" or "no" first, then one sentence of explanation.\n' +
    `Criterion: ${criterion.label}\n${criterion.description}`;
  const text = transcript.map((message) => `${message.role}: ${message.content}`).join('\n');
  return { system, messages: [{ role: 'user', content: `Transcript:\n${text || '(no messages)'}` }] };
}

/** A criterion is met when the model's answer starts with "yes". */
export function isMet(reply: string): boolean {
  return /^\s*yes\b/i.test(reply);
}
