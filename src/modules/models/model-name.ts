import { AppError } from '../../common/errors.js';
import { BUILTIN_MODELS, MODEL_PROVIDERS, type ModelProvider } from './model-providers.js';

// The providers and the builtin models are the descriptors' (model-providers.ts).
export { BUILTIN_MODELS, MODEL_PROVIDERS, type BuiltinModel, type ModelProvider } from './model-providers.js';

export interface ModelName {
  provider: ModelProvider;
  /** Everything after the first "/", e.g. "llama3.1:8b" or "org/model". */
  name: string;
}

const FIELD = 'modelConfig.model';
const MAX_LENGTH = 200;

function invalid(message: string): AppError {
  return AppError.badInput([{ field: FIELD, message }]);
}

/**
 * Splits '<provider>/<model_name>' at the first slash. Throws BAD_USER_INPUT naming
 * modelConfig.model for a malformed string, an unknown provider or an unknown builtin model.
 */
export function parseModelName(model: unknown): ModelName {
  if (typeof model !== 'string' || model.length > MAX_LENGTH || /[\s\p{Cc}]/u.test(model)) {
    throw invalid(`modelConfig.model must be "<provider>/<model_name>" without spaces, e.g. "builtin/echo"`);
  }
  const slash = model.indexOf('/');
  if (slash <= 0 || slash === model.length - 1) {
    throw invalid(`modelConfig.model must be "<provider>/<model_name>", e.g. "builtin/echo", got "${model}"`);
  }
  const provider = model.slice(0, slash);
  const name = model.slice(slash + 1);
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider)) {
    throw invalid(`Unknown model provider "${provider}": use one of ${MODEL_PROVIDERS.join(', ')}`);
  }
  if (provider === 'builtin' && !(BUILTIN_MODELS as readonly string[]).includes(name)) {
    throw invalid(`Unknown builtin model "${name}": use builtin/echo or builtin/extractive`);
  }
  return { provider: provider as ModelProvider, name };
}

/** Whether a model can call tools: every provider's through the AI SDK, and builtin/echo (offline); builtin/extractive answers passages only. */
export function callsTools(model: string): boolean {
  return model !== 'builtin/extractive';
}
