import { AppError, type FieldError } from '../../common/errors.js';
import type { ModelProvider } from './model-name.js';
import type { Check } from './model-settings.js';

/**
 * modelConfig.providerOptions, allow-listed per provider. The SDKs copy what they do not know
 * into the upstream request (openai-compatible spreads it over `model`, `n`, `max_tokens`), so
 * only options that change neither the model nor the cost of a reply are accepted.
 */
export type ProviderOptions = Record<string, Record<string, unknown>>;

const oneOf =
  (...values: string[]): Check =>
  (value) =>
    typeof value === 'string' && values.includes(value) ? undefined : `must be one of ${values.join(', ')}`;

const shortString: Check = (value) =>
  typeof value === 'string' && value.length >= 1 && value.length <= 256 ? undefined : 'must be a string of 1 to 256 characters';

const boolean: Check = (value) => (typeof value === 'boolean' ? undefined : 'must be true or false');

const reasoningEffort = oneOf('none', 'minimal', 'low', 'medium', 'high');
const textVerbosity = oneOf('low', 'medium', 'high');

/** Per provider: the one providerOptions key the SDK reads, and its accepted options. */
const ALLOWED: Record<ModelProvider, { key: string; options: Record<string, Check> } | null> = {
  builtin: null,
  openai: { key: 'openai', options: { user: shortString, reasoningEffort, textVerbosity } },
  anthropic: { key: 'anthropic', options: { sendReasoning: boolean } },
  'openai-compatible': { key: 'openaiCompatible', options: { user: shortString, reasoningEffort, textVerbosity } },
  // Google's options (thinking budgets, safety settings, cached contents) change cost or what is answered: none yet.
  google: null,
};

const FIELD = 'modelConfig.providerOptions';

/**
 * Validates providerOptions for the agent's provider and returns only what was checked. Any
 * other key → BAD_USER_INPUT naming modelConfig.providerOptions.<key>[.<option>].
 */
export function parseProviderOptions(provider: ModelProvider, options: Record<string, unknown> | null | undefined): ProviderOptions {
  const allowed = ALLOWED[provider];
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
