import { AppError } from '../../common/errors.js';
import { parseModelName } from './model-name.js';

function refusal(model: unknown): AppError {
  try {
    parseModelName(model);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected BAD_USER_INPUT');
}

const malformed = 'modelConfig.model must be "<provider>/<model_name>" without spaces, e.g. "builtin/echo"';

describe('parseModelName', () => {
  it('splits at the first slash', () => {
    expect(parseModelName('openai-compatible/org/model:8b')).toEqual({ provider: 'openai-compatible', name: 'org/model:8b' });
    expect(parseModelName('builtin/echo')).toEqual({ provider: 'builtin', name: 'echo' });
    expect(parseModelName('anthropic/x')).toEqual({ provider: 'anthropic', name: 'x' });
  });

  it('takes a name of 200 characters and refuses 201', () => {
    const long = `openai/${'m'.repeat(193)}`;
    expect(parseModelName(long).name).toHaveLength(193);
    expect(refusal(`${long}m`).errors).toEqual([{ field: 'modelConfig.model', message: malformed }]);
  });

  it.each([42, null, undefined, 'openai/gpt 4', 'openai/gpt\t4', 'openai/gpt\u00004', 'openai/\u0085x'])('refuses %j as malformed', (model) => {
    const error = refusal(model);
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors).toEqual([{ field: 'modelConfig.model', message: malformed }]);
  });

  it.each(['gpt-4o', '/gpt-4o', 'openai/', ''])('refuses %j, which has no provider or no name, quoting it', (model) => {
    expect(refusal(model).errors).toEqual([
      { field: 'modelConfig.model', message: `modelConfig.model must be "<provider>/<model_name>", e.g. "builtin/echo", got "${model}"` },
    ]);
  });

  it('refuses an unknown provider and an unknown builtin model, naming them', () => {
    expect(refusal('mistral/large').errors).toEqual([
      { field: 'modelConfig.model', message: 'Unknown model provider "mistral": use one of builtin, openai, anthropic, openai-compatible, google' },
    ]);
    expect(refusal('builtin/gpt').errors).toEqual([
      { field: 'modelConfig.model', message: 'Unknown builtin model "gpt": use builtin/echo or builtin/extractive' },
    ]);
    // any name goes for a real provider: its own API decides
    expect(parseModelName('openai/gpt')).toEqual({ provider: 'openai', name: 'gpt' });
  });
});
