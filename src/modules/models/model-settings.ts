import { AppError, type FieldError } from '../../common/errors.js';

/** The generation settings the AI SDK understands, as generateText takes them. */
export interface ModelSettings {
  temperature?: number;
  maxOutputTokens?: number;
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  stopSequences?: string[];
}

export type Check = (value: unknown) => string | undefined;

const number =
  (min: number, max: number): Check =>
  (value) =>
    typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? undefined : `must be a number from ${min} to ${max}`;

export const integer =
  (min: number, max: number): Check =>
  (value) =>
    Number.isInteger(value) && (value as number) >= min && (value as number) <= max ? undefined : `must be an integer from ${min} to ${max}`;

const strings: Check = (value) =>
  Array.isArray(value) && value.length <= 16 && value.every((item) => typeof item === 'string' && item !== '')
    ? undefined
    : 'must be an array of at most 16 non-empty strings';

/** MODEL_MAX_OUTPUT_TOKENS's default: the most tokens one reply may ask a provider for. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16_384;

/** Accepted keys → the SDK key they map to (maxTokens is the common alias) and their check. */
function settingsFor(maxOutputTokens: number): Record<string, { key: keyof ModelSettings; check: Check }> {
  return {
    temperature: { key: 'temperature', check: number(0, 2) },
    maxOutputTokens: { key: 'maxOutputTokens', check: integer(1, maxOutputTokens) },
    maxTokens: { key: 'maxOutputTokens', check: integer(1, maxOutputTokens) },
    topP: { key: 'topP', check: number(0, 1) },
    topK: { key: 'topK', check: integer(1, 1_000_000) },
    presencePenalty: { key: 'presencePenalty', check: number(-2, 2) },
    frequencyPenalty: { key: 'frequencyPenalty', check: number(-2, 2) },
    seed: { key: 'seed', check: integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) },
    stopSequences: { key: 'stopSequences', check: strings },
  };
}

export const MODEL_SETTING_KEYS = Object.keys(settingsFor(DEFAULT_MAX_OUTPUT_TOKENS));

/**
 * Validates modelConfig.modelSettings and maps it to the SDK's settings. Unknown keys, wrong
 * types and a token count above maxOutputTokens → BAD_USER_INPUT naming
 * modelConfig.modelSettings.<key>; null values are ignored.
 */
export function parseModelSettings(settings: Record<string, unknown> | null | undefined, maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS): ModelSettings {
  const SETTINGS = settingsFor(maxOutputTokens);
  const result: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(settings ?? {})) {
    const field = `modelConfig.modelSettings.${name}`;
    const setting = Object.hasOwn(SETTINGS, name) ? SETTINGS[name] : undefined;
    if (!setting) {
      errors.push({ field, message: `${field} is not a known setting: use ${MODEL_SETTING_KEYS.join(', ')}` });
      continue;
    }
    if (value === null || value === undefined) continue;
    const problem = setting.check(value);
    if (problem) errors.push({ field, message: `${field} ${problem}` });
    else if (!(name === 'maxTokens' && 'maxOutputTokens' in result)) result[setting.key] = value;
  }
  if (errors.length > 0) throw AppError.badInput(errors);
  return result as ModelSettings;
}
