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

/**
 * How builtin/echo calls a tool offline: a user message `call <name> <JSON object>` (the object may
 * be left out) names one of the tools it was given, and the tool is called with that object as its
 * arguments, exactly, so a test or a guide can also send arguments that break the tool's schema.
 */
const TOOL_CALL = /^call ([a-zA-Z0-9_-]{1,64})(?:\s+([\s\S]+))?$/;

/** The tool call a builtin/echo message asks for, or null (no such tool, or arguments that are not a JSON object). */
export function builtinToolCall(request: GenerateRequest): { name: string; args: Record<string, unknown> } | null {
  const match = TOOL_CALL.exec(lastUserMessage(request));
  if (!match || !request.tools?.some((tool) => tool.name === match[1])) return null;
  if (!match[2]) return { name: match[1]!, args: {} };
  try {
    const args: unknown = JSON.parse(match[2]);
    return args && typeof args === 'object' && !Array.isArray(args) ? { name: match[1]!, args: args as Record<string, unknown> } : null;
  } catch {
    return null;
  }
}

/**
 * A builtin reply that may call a tool: builtin/echo runs the call a message asks for (builtinToolCall)
 * and answers `Echo: <name> answered <its answer as JSON>` (then ` (truncated)` when it was cut), or
 * `Echo: <name> failed: <the error it was told>`; anything else is generateBuiltin's answer.
 */
export async function generateBuiltinWithTools(name: BuiltinModel, model: string, request: GenerateRequest): Promise<GenerateResult> {
  const call = name === 'echo' ? builtinToolCall(request) : null;
  if (!call) return generateBuiltin(name, model, request);
  const tool = request.tools!.find((each) => each.name === call.name)!;
  const output = await tool.execute(call.args);
  const text =
    typeof output.error === 'string'
      ? `Echo: ${call.name} failed: ${output.error}`
      : `Echo: ${call.name} answered ${JSON.stringify(output.answer ?? output)}${output.truncated ? ' (truncated)' : ''}`;
  const base = generateBuiltin(name, model, request);
  const outputTokens = countWords(text);
  return { text, usage: { ...base.usage, outputTokens, totalTokens: base.usage.inputTokens + outputTokens } };
}
