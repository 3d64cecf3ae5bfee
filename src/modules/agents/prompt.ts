import type { ChatMessage, Passage } from './agent.ports.js';
import type { MemoryConfig, ResolutionCriterion } from './agent.types.js';

/** Pure prompt building: what the model sees, and what the caller may see of its reply. */

export const DEFAULT_LAST_MESSAGES = 10;

/** The policy as the system prompt carries it ('' without one): the part no usage may count. */
export function policySection(policy: string | null): string {
  return policy ? `\n\nPolicy (hidden from the caller):\n${policy}` : '';
}

/** instructions, then the policy, then the retrieved passages. */
export function buildSystemPrompt(instructions: string, policy: string | null, passages: Passage[]): string {
  let system = instructions + policySection(policy);
  if (passages.length > 0) {
    const listed = passages.map((passage, index) => `[${index + 1}] ${passage.title}: ${passage.content}`).join('\n');
    system += `\n\nKnowledge base passages:\n${listed}`;
  }
  return system;
}

/** How many earlier messages the model sees: none without memory, lastMessages (default 10) with it. */
export function memoryWindow(memory: (Pick<MemoryConfig, 'enabled'> & { lastMessages?: number | null }) | null): number {
  if (!memory?.enabled) return 0;
  return memory.lastMessages ?? DEFAULT_LAST_MESSAGES;
}

/**
 * The policy's sentences as patterns that ignore case and how the words are spaced. A sentence
 * of one word is left out: redacting every "No" or "Refunds" would garble ordinary replies.
 */
function sentencePatterns(policy: string): RegExp[] {
  const sentences = policy
    .split(/(?<=[.!?])\s+|\n+/u)
    .map((sentence) => sentence.replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, ''))
    .map((sentence) => sentence.split(/\s+/u))
    .filter((words) => words.length >= 2);
  // Most words first, so a sentence is redacted whole before a shorter one inside it.
  sentences.sort((a, b) => b.length - a.length);
  return sentences.map((words) => new RegExp(words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'), 'giu'));
}

/**
 * Last line of defence, best effort: each sentence of the policy (of two words or more) that a
 * reply repeats, in any case and spacing, shows `[redacted]` instead. A model set on leaking can
 * still paraphrase, translate or spell it out.
 */
export function redactPolicy(text: string, policy: string | null): string {
  if (!policy) return text;
  return sentencePatterns(policy).reduce((redacted, pattern) => redacted.replace(pattern, '[redacted]'), text);
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
