import type { Config } from '../../config.js';
import { parseModelName, type ModelProvider } from './model-name.js';
import { modelProviderOf } from './model-providers.js';

/** The variable a provider needs that is not set (e.g. `OPENAI_API_KEY`); null when it can be called (builtin always can). */
export function providerMissing(config: Config['providers'], provider: ModelProvider): string | null {
  // The descriptor's variable (model-providers.ts); builtin needs none.
  const { required } = modelProviderOf(provider);
  return !required || required.set(config) ? null : required.variable;
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
