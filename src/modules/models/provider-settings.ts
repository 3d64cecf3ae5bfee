import type { Config } from '../../config.js';
import { parseModelName, type ModelProvider } from './model-name.js';

/** The variable each real provider cannot be called without, and whether the configuration has it. */
const REQUIRED: Record<Exclude<ModelProvider, 'builtin'>, { variable: string; set: (config: Config['providers']) => boolean }> = {
  openai: { variable: 'OPENAI_API_KEY', set: (config) => Boolean(config.openaiApiKey) },
  anthropic: { variable: 'ANTHROPIC_API_KEY', set: (config) => Boolean(config.anthropicApiKey) },
  'openai-compatible': { variable: 'OPENAI_COMPATIBLE_BASE_URL', set: (config) => Boolean(config.openaiCompatibleBaseUrl) },
  google: { variable: 'GEMINI_API_KEY', set: (config) => Boolean(config.geminiApiKey) },
};

/** The variable a provider needs that is not set (e.g. `OPENAI_API_KEY`); null when it can be called (builtin always can). */
export function providerMissing(config: Config['providers'], provider: ModelProvider): string | null {
  if (provider === 'builtin') return null;
  const required = REQUIRED[provider];
  return required.set(config) ? null : required.variable;
}

/** providerMissing for a `<provider>/<model_name>` string; a name that does not parse is left to its own checks (null). */
export function modelMissing(config: Config['providers'], model: string): string | null {
  let provider: ModelProvider;
  try {
    provider = parseModelName(model).provider;
  } catch {
    return null;
  }
  return providerMissing(config, provider);
}
