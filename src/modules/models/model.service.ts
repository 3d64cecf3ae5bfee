import type { Config } from '../../config.js';
import { generateBuiltinWithTools } from './builtin.model.js';
import { parseModelName, type BuiltinModel } from './model-name.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, parseModelSettings } from './model-settings.js';
import { parseProviderOptions } from './provider-options.js';
import { generateBuiltinObject } from './builtin-object.js';
import { modelMissing } from './provider-settings.js';
import type { GenerateObjectRequest, GenerateObjectResult, GenerateRequest, GenerateResult, StreamPart, StreamRequest } from './model.types.js';

export interface ModelServiceOptions {
  /** Upper bound of one provider call, retries included. */
  timeoutMs?: number;
  /** MODEL_MAX_OUTPUT_TOKENS: the most a setting may ask for, and what a real provider is asked for when none is set. */
  maxOutputTokens?: number;
}

/** What assertModelConfig checks of an agent's modelConfig. */
export interface ModelConfigCheck {
  model: string;
  modelSettings?: Record<string, unknown> | null;
  providerOptions?: Record<string, unknown> | null;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** Answers agent messages: the offline builtin provider, or a real one through the Vercel AI SDK. */
export class ModelService {
  private readonly timeoutMs: number;
  private readonly maxOutputTokens: number;

  constructor(
    private readonly config: Config['providers'],
    options: ModelServiceOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxOutputTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  }

  /** For validation at agent creation: throws the same BAD_USER_INPUT as generate would. */
  assertModelName(model: string): void {
    parseModelName(model);
  }

  /** For validation at agent creation and update, and before a message is stored: generate's BAD_USER_INPUT, fields included. */
  assertModelConfig(modelConfig: ModelConfigCheck): void {
    const { provider } = parseModelName(modelConfig.model);
    parseModelSettings(modelConfig.modelSettings, this.maxOutputTokens);
    parseProviderOptions(provider, modelConfig.providerOptions);
  }

  /** The variable `model`'s provider needs that is not set (e.g. `OPENAI_API_KEY`), or null: what generate would answer UNAVAILABLE for. */
  missingFor(model: string): string | null {
    return modelMissing(this.config, model);
  }

  /**
   * Throws AppError('BAD_USER_INPUT') for a model string that is not <provider>/<model_name>, an
   * unknown provider, bad settings or provider options, AppError('UNAVAILABLE') when the provider is not configured
   * or fails/unreachable.
   */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { provider, name } = parseModelName(request.model);
    const settings = parseModelSettings(request.settings, this.maxOutputTokens);
    // Only checked options travel on: the SDK would copy anything else into the upstream request.
    const providerOptions = parseProviderOptions(provider, request.providerOptions);
    if (provider === 'builtin') return generateBuiltinWithTools(name as BuiltinModel, request.model, request);

    // Without a setting, a provider would use the model's own maximum (Anthropic's reaches 64k+).
    settings.maxOutputTokens ??= this.maxOutputTokens;
    // The AI SDK and its providers (a tenth of the server's heap) load when an agent first uses one.
    const { generateWithSdk } = await import('./sdk.provider.js');
    return generateWithSdk(this.config, provider, name, request, { settings, providerOptions }, this.timeoutMs);
  }

  /**
   * A JSON answer asked to follow `request.schema` (structured output through the AI SDK), with the
   * names, settings and errors of generate. The answer is parsed, not validated: an answer that is not
   * JSON throws ModelOutputError, and the caller checks the value against its schema. The builtin
   * models fill the schema deterministically from the transcript (builtin-object.ts).
   */
  async generateObject(request: GenerateObjectRequest): Promise<GenerateObjectResult> {
    const { provider, name } = parseModelName(request.model);
    const settings = parseModelSettings(request.settings, this.maxOutputTokens);
    const providerOptions = parseProviderOptions(provider, request.providerOptions);
    if (provider === 'builtin') return generateBuiltinObject(request);
    settings.maxOutputTokens ??= this.maxOutputTokens;
    const { generateObjectWithSdk } = await import('./sdk.provider.js');
    return generateObjectWithSdk(this.config, provider, name, request, { settings, providerOptions }, this.timeoutMs);
  }

  /**
   * The reply streamed as it is written (the streaming voice pipeline): the same names, settings and
   * errors as generate, thrown before the first part. The builtin models write their deterministic
   * reply word by word, yielding to the event loop between words as a provider's stream would.
   * `signal` ends the stream early without an error.
   */
  async *stream(request: StreamRequest): AsyncGenerator<StreamPart> {
    const { provider, name } = parseModelName(request.model);
    const settings = parseModelSettings(request.settings, this.maxOutputTokens);
    const providerOptions = parseProviderOptions(provider, request.providerOptions);
    if (provider === 'builtin') {
      const result = await generateBuiltinWithTools(name as BuiltinModel, request.model, request);
      for (const word of result.text.match(/\S+\s*/g) ?? []) {
        if (request.signal.aborted) return;
        await new Promise((resolve) => setImmediate(resolve));
        yield { type: 'text', text: word };
      }
      yield { type: 'usage', usage: result.usage };
      return;
    }
    settings.maxOutputTokens ??= this.maxOutputTokens;
    const { streamWithSdk } = await import('./sdk.provider.js');
    yield* streamWithSdk(this.config, provider, name, request, { settings, providerOptions }, this.timeoutMs);
  }
}
