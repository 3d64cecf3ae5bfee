import { readFileSync } from 'node:fs';
import type { Config } from '../../src/config.js';
import { MODEL_PROVIDERS, parseModelName } from '../../src/modules/models/model-name.js';
import { MODEL_PROVIDER_DESCRIPTORS, modelProviderTable } from '../../src/modules/models/model-providers.js';
import { parseProviderOptions } from '../../src/modules/models/provider-options.js';
import { modelMissing, providerMissing } from '../../src/modules/models/provider-settings.js';

// The text model providers' descriptors are the one list: the names modelConfig.model takes, the
// variable each cannot be called without, the providerOptions allowed, and the docs' table.

const none = {} as Config['providers'];
const every = {
  openaiApiKey: 'sk-x',
  anthropicApiKey: 'sk-ant-x',
  geminiApiKey: 'g-x',
  openaiCompatibleBaseUrl: 'http://127.0.0.1:11434/v1',
} as Config['providers'];

describe('the model provider descriptors', () => {
  it('are the providers modelConfig.model takes, and no other', () => {
    expect(MODEL_PROVIDERS).toEqual(MODEL_PROVIDER_DESCRIPTORS.map((descriptor) => descriptor.name));
    for (const name of MODEL_PROVIDERS) expect(parseModelName(name === 'builtin' ? 'builtin/echo' : `${name}/some-model`).provider).toBe(name);
    expect(() => parseModelName('mistral/large')).toThrow(`use one of ${MODEL_PROVIDERS.join(', ')}`);
  });

  it('name the variable each provider needs, missing until it is set; builtin needs none', () => {
    const missing = Object.fromEntries(MODEL_PROVIDERS.map((name) => [name, providerMissing(none, name)]));
    expect(missing).toEqual({
      builtin: null,
      openai: 'OPENAI_API_KEY',
      anthropic: 'ANTHROPIC_API_KEY',
      'openai-compatible': 'OPENAI_COMPATIBLE_BASE_URL',
      google: 'GEMINI_API_KEY',
    });
    expect(MODEL_PROVIDERS.map((name) => providerMissing(every, name))).toEqual(MODEL_PROVIDERS.map(() => null));
    expect(modelMissing(none, 'anthropic/claude')).toBe('ANTHROPIC_API_KEY');
    expect(modelMissing(none, 'not a model')).toBeNull();
  });

  it('allow each provider its one providerOptions key, and nothing under it the list does not name', () => {
    for (const descriptor of MODEL_PROVIDER_DESCRIPTORS) {
      const key = descriptor.providerOptions?.key ?? 'openai';
      const refused = () => parseProviderOptions(descriptor.name, { [key]: { notAnOption: 1 } });
      expect(refused).toThrow(descriptor.providerOptions ? 'is not an accepted option' : 'it takes no provider options');
    }
    expect(parseProviderOptions('openai', { openai: { reasoningEffort: 'low' } })).toEqual({ openai: { reasoningEffort: 'low' } });
    expect(() => parseProviderOptions('anthropic', { openai: { user: 'x' } })).toThrow('only "anthropic" is accepted');
  });

  it('make the table docs/agents-and-knowledge.md shows', () => {
    const docs = readFileSync(new URL('../../docs/agents-and-knowledge.md', import.meta.url), 'utf8');
    const shown = /<!-- model-providers:start -->\n([\s\S]*?)\n<!-- model-providers:end -->/.exec(docs)?.[1];
    expect(shown).toBe(modelProviderTable());
  });
});
