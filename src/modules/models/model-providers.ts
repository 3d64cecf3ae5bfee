import type { Config } from '../../config.js';
import type { Check } from './model-settings.js';

// The text model providers, one descriptor each in one list: what `modelConfig.model`'s
// `<provider>/` may name, the variable a provider cannot be called without, the providerOptions
// key its SDK reads with the options allowed under it, and the docs' row. The model name's
// check (model-name.ts), the readiness checks (provider-settings.ts), the providerOptions
// allow-list (provider-options.ts) and the table in docs/agents-and-knowledge.md › Models are
// read from here (test/agents/model-providers.test.ts keeps the table equal to the list); the
// SDK each one is called through is its case in sdk.provider.ts, which the compiler makes
// exhaustive over these names. Data only: no SDK is loaded by this file.

/** The builtin models: offline, deterministic, nothing to set. */
export const BUILTIN_MODELS = ['echo', 'extractive'] as const;
export type BuiltinModel = (typeof BUILTIN_MODELS)[number];

/** One provider, as `modelConfig.model` names it (`<name>/<model>`). */
export interface ModelProviderDescriptor<Name extends string = string> {
  name: Name;
  /** The variable it cannot be called without, and whether the configuration has it; null: it needs nothing. */
  required: { variable: string; set: (config: Config['providers']) => boolean } | null;
  /** Variables it reads when set, for the docs' table. */
  optional: readonly string[];
  /** The one `modelConfig.providerOptions` key its SDK reads, and the options accepted under it; null: it takes none. */
  providerOptions: { key: string; options: Record<string, Check> } | null;
  /** The docs' rows: how a model of it is named, and what to know. */
  rows: readonly { model: string; notes: string }[];
}

const oneOf =
  (...values: string[]): Check =>
  (value) =>
    typeof value === 'string' && values.includes(value) ? undefined : `must be one of ${values.join(', ')}`;

const shortString: Check = (value) =>
  typeof value === 'string' && value.length >= 1 && value.length <= 256 ? undefined : 'must be a string of 1 to 256 characters';

const boolean: Check = (value) => (typeof value === 'boolean' ? undefined : 'must be true or false');

const reasoningEffort = oneOf('none', 'minimal', 'low', 'medium', 'high');
const textVerbosity = oneOf('low', 'medium', 'high');

// The SDKs copy options they do not know into the upstream request (openai-compatible spreads them
// over `model`, `n`, `max_tokens`), so only options that change neither the model nor the cost of a
// reply are accepted.
export const MODEL_PROVIDER_DESCRIPTORS = [
  {
    name: 'builtin',
    required: null,
    optional: [],
    providerOptions: null,
    rows: [
      { model: 'builtin/echo', notes: 'answers `Echo: <message>`, offline and deterministic' },
      { model: 'builtin/extractive', notes: 'answers with the best knowledge-base passages, or says it has none' },
    ],
  },
  {
    name: 'openai',
    required: { variable: 'OPENAI_API_KEY', set: (config) => Boolean(config.openaiApiKey) },
    optional: [],
    providerOptions: { key: 'openai', options: { user: shortString, reasoningEffort, textVerbosity } },
    rows: [{ model: 'openai/<model>', notes: 'through the Vercel AI SDK' }],
  },
  {
    name: 'anthropic',
    required: { variable: 'ANTHROPIC_API_KEY', set: (config) => Boolean(config.anthropicApiKey) },
    optional: [],
    providerOptions: { key: 'anthropic', options: { sendReasoning: boolean } },
    rows: [{ model: 'anthropic/<model>', notes: 'through the Vercel AI SDK' }],
  },
  {
    name: 'openai-compatible',
    required: { variable: 'OPENAI_COMPATIBLE_BASE_URL', set: (config) => Boolean(config.openaiCompatibleBaseUrl) },
    optional: ['OPENAI_COMPATIBLE_API_KEY'],
    providerOptions: { key: 'openaiCompatible', options: { user: shortString, reasoningEffort, textVerbosity } },
    rows: [{ model: 'openai-compatible/<model>', notes: 'Ollama, vLLM, LM Studio… e.g. `http://localhost:11434/v1`' }],
  },
  {
    name: 'google',
    required: { variable: 'GEMINI_API_KEY', set: (config) => Boolean(config.geminiApiKey) },
    optional: ['GEMINI_BASE_URL'],
    // Google's options (thinking budgets, safety settings, cached contents) change cost or what is answered: none yet.
    providerOptions: null,
    rows: [{ model: 'google/<model>', notes: 'through the Vercel AI SDK’s Google provider (Gemini)' }],
  },
] as const satisfies readonly ModelProviderDescriptor[];

export type ModelProvider = (typeof MODEL_PROVIDER_DESCRIPTORS)[number]['name'];

/** The providers' names, in the list's order. */
export const MODEL_PROVIDERS: readonly ModelProvider[] = MODEL_PROVIDER_DESCRIPTORS.map((descriptor) => descriptor.name);

/** The descriptor of a provider. */
export function modelProviderOf(name: ModelProvider): ModelProviderDescriptor<ModelProvider> {
  return MODEL_PROVIDER_DESCRIPTORS.find((descriptor) => descriptor.name === name)! as ModelProviderDescriptor<ModelProvider>;
}

/** The table docs/agents-and-knowledge.md › Models shows, made from the list. */
export function modelProviderTable(): string {
  const lines = ['| provider | needs | notes |', '|---|---|---|'];
  for (const descriptor of MODEL_PROVIDER_DESCRIPTORS as readonly ModelProviderDescriptor[]) {
    const optional = descriptor.optional.map((variable) => `\`${variable}\``).join(', ');
    const needs = descriptor.required ? `\`${descriptor.required.variable}\`${optional ? ` (+ optional ${optional})` : ''}` : 'nothing';
    for (const row of descriptor.rows) lines.push(`| \`${row.model}\` | ${needs} | ${row.notes} |`);
  }
  return lines.join('\n');
}
