import { AppError } from '../../common/errors.js';
import type { Config } from '../../config.js';
import { generateBuiltin } from './builtin.model.js';
import { parseModelName, type BuiltinModel } from './model-name.js';
import { parseModelSettings } from './model-settings.js';
import type { GenerateRequest, GenerateResult } from './model.types.js';

export interface ModelServiceOptions {
  /** Upper bound of one provider call, retries included. */
  timeoutMs?: number;
}

/** What assertModelConfig checks of an agent's modelConfig. */
export interface ModelConfigCheck {
  model: string;
  modelSettings?: Record<string, unknown> | null;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** Answers agent messages: the offline builtin provider, or a real one through the Vercel AI SDK. */
export class ModelService {
  private readonly timeoutMs: number;

  constructor(
    private readonly config: Config['providers'],
    options: ModelServiceOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** For validation at agent creation: throws the same BAD_USER_INPUT as generate would. */
  assertModelName(model: string): void {
    parseModelName(model);
  }

  /** For validation at agent creation and update, and before a message is stored: generate's BAD_USER_INPUT, fields included. */
  assertModelConfig(modelConfig: ModelConfigCheck): void {
    parseModelName(modelConfig.model);
    parseModelSettings(modelConfig.modelSettings);
  }

  /**
   * Throws AppError('BAD_USER_INPUT') for a model string that is not <provider>/<model_name>, an
   * unknown provider or bad settings, AppError('UNAVAILABLE') when the provider is not configured
   * or fails/unreachable.
   */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { provider, name } = parseModelName(request.model);
    const settings = parseModelSettings(request.settings);
    if (provider === 'builtin') return generateBuiltin(name as BuiltinModel, request.model, request);

    // The AI SDK and its providers (a tenth of the server's heap) load when an agent first uses one.
    const { generateWithSdk } = await import('./sdk.provider.js');
    return generateWithSdk(this.config, provider, name, request, settings, this.timeoutMs);
  }
}
