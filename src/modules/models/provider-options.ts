import { AppError, type FieldError } from '../../common/errors.js';
import type { ModelProvider } from './model-name.js';
import { modelProviderOf } from './model-providers.js';

/**
 * modelConfig.providerOptions, allow-listed per provider. The SDKs copy what they do not know
 * into the upstream request (openai-compatible spreads it over `model`, `n`, `max_tokens`), so
 * only options that change neither the model nor the cost of a reply are accepted.
 */
export type ProviderOptions = Record<string, Record<string, unknown>>;

const FIELD = 'modelConfig.providerOptions';

/**
 * Validates providerOptions for the agent's provider and returns only what was checked. Any
 * other key → BAD_USER_INPUT naming modelConfig.providerOptions.<key>[.<option>].
 */
export function parseProviderOptions(provider: ModelProvider, options: Record<string, unknown> | null | undefined): ProviderOptions {
  // The descriptor's one key and its allow-list (model-providers.ts).
  const allowed = modelProviderOf(provider).providerOptions;
  const result: ProviderOptions = {};
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(options ?? {})) {
    const field = `${FIELD}.${key}`;
    if (!allowed || key !== allowed.key) {
      const use = allowed ? `only "${allowed.key}" is accepted` : 'it takes no provider options';
      errors.push({ field, message: `${field} is not an option of provider "${provider}": ${use}` });
      continue;
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ field, message: `${field} must be an object` });
      continue;
    }
    const checked: Record<string, unknown> = {};
    for (const [name, option] of Object.entries(value as Record<string, unknown>)) {
      const optionField = `${field}.${name}`;
      const check = Object.hasOwn(allowed.options, name) ? allowed.options[name] : undefined;
      if (!check) {
        errors.push({ field: optionField, message: `${optionField} is not an accepted option: use ${Object.keys(allowed.options).join(', ')}` });
        continue;
      }
      if (option === null || option === undefined) continue;
      const problem = check(option);
      if (problem) errors.push({ field: optionField, message: `${optionField} ${problem}` });
      else checked[name] = option;
    }
    result[key] = checked;
  }
  if (errors.length > 0) throw AppError.badInput(errors);
  return result;
}
