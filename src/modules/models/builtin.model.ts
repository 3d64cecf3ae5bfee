import type { BuiltinModel } from './model-name.js';
import type { GenerateRequest, GenerateResult } from './model.types.js';

export const NO_PASSAGES_REPLY = "I don't have any knowledge-base passages about that.";

/** Whitespace-separated words: a deterministic stand-in for tokens when no tokenizer runs. */
export function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

function lastUserMessage(request: GenerateRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === 'user') return message.content.trim();
  }
  return '';
}

/** The passage texts, best first; ties keep the retrieval order (sort is stable). */
function bestPassages(request: GenerateRequest): string[] {
  return [...(request.passages ?? [])]
    .sort((a, b) => b.score - a.score)
    .map((passage) => passage.content.trim())
    .filter((content) => content !== '');
}

/**
 * The offline provider (CONTRACT.md §8). Never repeats the system prompt: it carries the
 * agent's hidden policy, which its usage does not count either.
 */
export function generateBuiltin(name: BuiltinModel, model: string, request: GenerateRequest): GenerateResult {
  let text: string;
  if (name === 'echo') {
    text = `Echo: ${lastUserMessage(request)}`.trimEnd();
  } else {
    const passages = bestPassages(request);
    text = passages.length > 0 ? passages.join('\n\n') : NO_PASSAGES_REPLY;
  }
  const prompt = [request.system ?? '', ...request.messages.map((message) => message.content)].join('\n');
  // The hidden part sits between whitespace in the prompt, so its words subtract exactly.
  const inputTokens = countWords(prompt) - countWords(request.hidden ?? '');
  const outputTokens = countWords(text);
  return { text, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, model } };
}
