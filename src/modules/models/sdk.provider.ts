import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  generateText,
  jsonSchema,
  NoObjectGeneratedError,
  NoOutputGeneratedError,
  Output,
  RetryError,
  stepCountIs,
  streamText,
  tool,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import { AppError } from '../../common/errors.js';
import type { Config } from '../../config.js';
import type { ModelProvider } from './model-name.js';
import { providerMissing } from './provider-settings.js';
import type { ModelSettings } from './model-settings.js';
import type { ProviderOptions } from './provider-options.js';
import {
  ModelOutputError,
  TOOL_STEPS,
  type GenerateObjectRequest,
  type GenerateObjectResult,
  type GenerateRequest,
  type GenerateResult,
  type StreamPart,
  type StreamRequest,
} from './model.types.js';

export type SdkProvider = Exclude<ModelProvider, 'builtin'>;

function notConfigured(provider: SdkProvider, variable: string): AppError {
  return new AppError('UNAVAILABLE', `Model provider "${provider}" is not configured: set ${variable}`);
}

/** The SDK model for a provider, or UNAVAILABLE naming the variable to set. */
export function languageModel(config: Config['providers'], provider: SdkProvider, name: string): LanguageModel {
  const missing = providerMissing(config, provider);
  if (missing) throw notConfigured(provider, missing);
  switch (provider) {
    case 'openai':
      return createOpenAI({ apiKey: config.openaiApiKey })(name);
    case 'anthropic':
      return createAnthropic({ apiKey: config.anthropicApiKey })(name);
    case 'openai-compatible':
      return createOpenAICompatible({
        // providerOptions.openaiCompatible is the SDK's key; its unknown keys would go into the request
        // body, over model and max_tokens: parseProviderOptions lets only its allow-list through
        name: 'openaiCompatible',
        baseURL: config.openaiCompatibleBaseUrl!,
        apiKey: config.openaiCompatibleApiKey,
        includeUsage: true,
      })(name);
    case 'google':
      return createGoogleGenerativeAI({ apiKey: config.geminiApiKey, baseURL: geminiApiUrl(config) })(name);
  }
}

/** The Gemini API's versioned base (`generateContent` lives under it): GEMINI_BASE_URL's, or Google's own. */
export function geminiApiUrl(config: Config['providers']): string {
  return `${config.geminiBaseUrl ?? 'https://generativelanguage.googleapis.com'}/v1beta`;
}

/** The innermost error of the SDK's retry wrapper and fetch's cause chain. */
function networkCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function errorName(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : 'unknown error';
}

/**
 * fetch's "fetch failed" TypeError: the SDK wraps it in APICallError, but only when it comes from
 * the same realm (under jest's VM modules it does not), so it is recognised by shape too.
 */
function isNetworkFailure(error: unknown): boolean {
  if (APICallError.isInstance(error)) return error.statusCode === undefined;
  return networkCode(error) !== undefined || (errorName(error) === 'TypeError' && (error as Error).message === 'fetch failed');
}

function reason(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `did not answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)}s` : `${timeoutMs}ms`}`;
  if (isNetworkFailure(error)) {
    const code = networkCode(error);
    return `is unreachable${code ? ` (${code})` : ''}`;
  }
  if (APICallError.isInstance(error) && error.statusCode !== undefined) {
    const status = error.statusCode;
    if (status === 401 || status === 403) return `rejected the configured credentials (HTTP ${status})`;
    if (status === 429) return 'is rate limiting requests (HTTP 429)';
    return `answered HTTP ${status}`;
  }
  return `failed (${errorName(error)})`;
}

/**
 * UNAVAILABLE naming the provider and the kind of failure. Neither the provider's message nor
 * the SDK error travel on: they can echo the prompt (the agent's hidden policy) or a masked key.
 * The attached cause is a one-line summary for the 5xx log.
 */
export function providerFailure(provider: SdkProvider, model: string, error: unknown, timedOut: boolean, timeoutMs: number): AppError {
  const inner = RetryError.isInstance(error) ? error.lastError : error;
  const message = `Model provider "${provider}" ${reason(inner, timedOut, timeoutMs)} for model "${model}"`;
  const status = APICallError.isInstance(inner) ? ` status=${inner.statusCode ?? 'none'}` : '';
  const code = networkCode(inner) ? ` code=${networkCode(inner)}` : '';
  return Object.assign(new AppError('UNAVAILABLE', message), {
    cause: new Error(`${errorName(inner)}${status}${code}`),
    upstreamStatus: APICallError.isInstance(inner) ? inner.statusCode : undefined,
  });
}

/**
 * The provider's input count less the hidden part's share of the prompt, by characters: the
 * provider's tokenizer is not at hand, so this is an estimate (within a few tokens), not exact.
 */
function withoutHidden(inputTokens: number, request: GenerateRequest): number {
  const hidden = request.hidden?.length ?? 0;
  if (hidden === 0 || inputTokens === 0) return inputTokens;
  const total = (request.system?.length ?? 0) + request.messages.reduce((sum, message) => sum + message.content.length, 0);
  return Math.max(0, inputTokens - Math.round((inputTokens * hidden) / Math.max(total, 1)));
}

/**
 * What every call to a provider sends: the prompt (instructions, then the messages), the checked
 * settings and provider options, and no retry by the SDK (its backoff starts at 2 s: a caller on the
 * line is better served by failing fast, and the analysis worker retries a bad answer itself).
 */
function callOptions(request: GenerateRequest, checked: { settings: ModelSettings; providerOptions: ProviderOptions }, signal: AbortSignal) {
  return {
    instructions: request.system || undefined,
    messages: request.messages.map((message): ModelMessage => ({ role: message.role, content: message.content })),
    allowSystemInMessages: true as const,
    ...checked.settings,
    providerOptions: checked.providerOptions as Parameters<typeof generateText>[0]['providerOptions'],
    maxRetries: 0,
    abortSignal: signal,
  };
}

/** The provider's token counts as the gateway reports them (the hidden part's share left out of the input). */
function usageOf(usage: { inputTokens?: number; outputTokens?: number }, request: GenerateRequest): GenerateResult['usage'] {
  const inputTokens = withoutHidden(usage.inputTokens ?? 0, request);
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, model: request.model };
}

/**
 * The request's tools as the AI SDK runs them: each call's arguments go to `execute` (which checks
 * them against the schema itself, so the SDK is given no validator), its answer back to the model,
 * for at most TOOL_STEPS steps.
 */
function sdkTools(request: GenerateRequest): { tools?: ToolSet; stopWhen?: ReturnType<typeof stepCountIs> } {
  if (!request.tools?.length) return {};
  const tools: ToolSet = {};
  for (const each of request.tools) {
    tools[each.name] = tool({
      description: each.description,
      inputSchema: jsonSchema<Record<string, unknown>>(each.parameters as Parameters<typeof jsonSchema>[0]),
      execute: (args: Record<string, unknown>) => each.execute(args),
    });
  }
  return { tools, stopWhen: stepCountIs(TOOL_STEPS) };
}

/** One answer from a real provider through the AI SDK, the tools run as the model calls them; failures become providerFailure's UNAVAILABLE. */
export async function generateWithSdk(
  config: Config['providers'],
  provider: SdkProvider,
  name: string,
  request: GenerateRequest,
  checked: { settings: ModelSettings; providerOptions: ProviderOptions },
  timeoutMs: number,
): Promise<GenerateResult> {
  const model = languageModel(config, provider, name);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const result = await generateText({ model, ...callOptions(request, checked, signal), ...sdkTools(request) });
    return { text: result.text, usage: usageOf(result.totalUsage, request) };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw providerFailure(provider, name, error, signal.aborted, timeoutMs);
  }
}

/**
 * A JSON answer from a real provider through the AI SDK's structured output (generateText with an
 * object output; the provider is sent the schema as its response format). The SDK parses the answer
 * but is given no validator: the caller checks it against the schema, so one validator (ajv) decides
 * for every provider. An answer that is not JSON is ModelOutputError; other failures providerFailure's
 * UNAVAILABLE. No call is waiting on the line, but the caller retries a bad answer itself, so the
 * SDK's own retries stay off.
 */
export async function generateObjectWithSdk(
  config: Config['providers'],
  provider: SdkProvider,
  name: string,
  request: GenerateObjectRequest,
  checked: { settings: ModelSettings; providerOptions: ProviderOptions },
  timeoutMs: number,
): Promise<GenerateObjectResult> {
  const model = languageModel(config, provider, name);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const result = await generateText({
      model,
      ...callOptions(request, checked, signal),
      output: Output.object({ schema: jsonSchema<unknown>(request.schema as Parameters<typeof jsonSchema>[0]), name: 'call_analysis' }),
    });
    const object: unknown = result.output;
    return { object, usage: usageOf(result.usage, request) };
  } catch (error) {
    if (error instanceof AppError) throw error;
    // The provider's text is not repeated: it may quote the transcript. Its length tells enough.
    if (NoObjectGeneratedError.isInstance(error)) throw new ModelOutputError(`the answer was not JSON (${error.text?.length ?? 0} characters)`);
    if (NoOutputGeneratedError.isInstance(error)) throw new ModelOutputError('the answer held no output');
    throw providerFailure(provider, name, error, signal.aborted, timeoutMs);
  }
}

/**
 * A reply streamed from a real provider through the AI SDK, with the agent's tools run as the model
 * calls them (at most TOOL_STEPS steps: calls, then the words after them). The request's signal ends
 * it quietly; the timeout, a provider error or a refused key end it with providerFailure's UNAVAILABLE.
 */
export async function* streamWithSdk(
  config: Config['providers'],
  provider: SdkProvider,
  name: string,
  request: StreamRequest,
  checked: { settings: ModelSettings; providerOptions: ProviderOptions },
  timeoutMs: number,
): AsyncGenerator<StreamPart> {
  const model = languageModel(config, provider, name);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, request.signal]);
  let failure: unknown = null;
  try {
    const result = streamText({
      model,
      ...callOptions(request, checked, signal),
      ...sdkTools(request),
      onError: ({ error }) => {
        failure = error;
      },
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta' && part.text) yield { type: 'text', text: part.text };
      else if (part.type === 'error') failure = part.error;
    }
    if (request.signal.aborted) return;
    if (failure) throw failure;
    yield { type: 'usage', usage: usageOf(await result.totalUsage, request) };
  } catch (error) {
    if (request.signal.aborted) return;
    if (error instanceof AppError) throw error;
    throw providerFailure(provider, name, error, timeout.aborted, timeoutMs);
  }
}
