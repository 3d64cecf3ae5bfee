import { AppError } from '../../src/common/errors.js';
import { parseModelName } from '../../src/modules/models/model-name.js';
import { parseModelSettings } from '../../src/modules/models/model-settings.js';
import { ModelService } from '../../src/modules/models/model.service.js';

function caught(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('parseModelName', () => {
  it('splits at the first slash, keeping slashes and colons in the model name', () => {
    expect(parseModelName('openai-compatible/llama3.1:8b')).toEqual({ provider: 'openai-compatible', name: 'llama3.1:8b' });
    expect(parseModelName('openai-compatible/meta-llama/Llama-3.1-8B')).toEqual({
      provider: 'openai-compatible',
      name: 'meta-llama/Llama-3.1-8B',
    });
    expect(parseModelName('openai/gpt-4o-mini')).toEqual({ provider: 'openai', name: 'gpt-4o-mini' });
    expect(parseModelName('anthropic/claude-sonnet-4-5')).toEqual({ provider: 'anthropic', name: 'claude-sonnet-4-5' });
    expect(parseModelName('builtin/extractive')).toEqual({ provider: 'builtin', name: 'extractive' });
  });

  it.each(['gpt-4o', '', '/gpt-4o', 'openai/', 'open ai/gpt', 'openai/gpt 4', 'openai/gpt\n', 'x'.repeat(201)])(
    'rejects the malformed %j on modelConfig.model',
    (model) => {
      const error = caught(() => parseModelName(model));
      expect(error.code).toBe('BAD_USER_INPUT');
      expect(error.errors).toEqual([{ field: 'modelConfig.model', message: expect.stringContaining('<provider>/<model_name>') }]);
    },
  );

  it('rejects an unknown provider and an unknown builtin model, naming them', () => {
    const provider = caught(() => parseModelName('mistral/large'));
    expect(provider.code).toBe('BAD_USER_INPUT');
    expect(provider.errors).toEqual([{ field: 'modelConfig.model', message: expect.stringContaining('"mistral"') }]);
    const builtin = caught(() => parseModelName('builtin/gpt'));
    expect(builtin.errors).toEqual([{ field: 'modelConfig.model', message: expect.stringContaining('"gpt"') }]);
  });

  it('is what ModelService.assertModelName checks', () => {
    const service = new ModelService({});
    expect(() => service.assertModelName('builtin/echo')).not.toThrow();
    expect(() => service.assertModelName('openai/gpt-4o')).not.toThrow(); // configuration is checked at call time
    expect(caught(() => service.assertModelName('nope')).errors?.[0]?.field).toBe('modelConfig.model');
  });
});

describe('parseModelSettings', () => {
  it('maps known settings, with maxTokens as an alias of maxOutputTokens, and skips nulls', () => {
    expect(
      parseModelSettings({
        temperature: 0.2,
        maxTokens: 256,
        topP: 0.9,
        topK: 40,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        seed: 7,
        stopSequences: ['END'],
        maxOutputTokens: null,
      }),
    ).toEqual({
      temperature: 0.2,
      maxOutputTokens: 256,
      topP: 0.9,
      topK: 40,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      seed: 7,
      stopSequences: ['END'],
    });
    expect(parseModelSettings({ maxOutputTokens: 100, maxTokens: 5 })).toEqual({ maxOutputTokens: 100 });
    expect(parseModelSettings(null)).toEqual({});
    expect(parseModelSettings(undefined)).toEqual({});
  });

  it('rejects unknown keys and wrong types, naming each modelConfig.modelSettings.<key>', () => {
    const error = caught(() => parseModelSettings({ temperature: 'hot', maxTokens: 1.5, stopSequences: 'END', topP: 2, verbose: true, constructor: 1 }));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors?.map((e) => e.field).sort()).toEqual([
      'modelConfig.modelSettings.constructor',
      'modelConfig.modelSettings.maxTokens',
      'modelConfig.modelSettings.stopSequences',
      'modelConfig.modelSettings.temperature',
      'modelConfig.modelSettings.topP',
      'modelConfig.modelSettings.verbose',
    ]);
    expect(error.errors?.find((e) => e.field.endsWith('.temperature'))?.message).toMatch(/number/);
  });
});
