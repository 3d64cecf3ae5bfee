import { chooseLogFormat, createLogger } from './logger.js';

describe('chooseLogFormat', () => {
  it('is pretty only for a terminal in development', () => {
    expect(chooseLogFormat(true, 'development')).toBe('pretty');
  });

  it('is JSON for a pipe or a file, whatever the environment', () => {
    expect(chooseLogFormat(false, 'development')).toBe('json');
    expect(chooseLogFormat(undefined, 'development')).toBe('json');
  });

  it('is JSON outside development, even at a terminal', () => {
    for (const nodeEnv of ['production', 'test', 'staging']) expect(chooseLogFormat(true, nodeEnv)).toBe('json');
  });
});

describe('createLogger', () => {
  it('writes JSON lines to a destination, with secrets redacted', () => {
    const lines: string[] = [];
    createLogger('info', { write: (line: string) => void lines.push(line) }).info({ apiKey: 'tag_secret' }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'hello', apiKey: '[redacted]' });
  });
});

describe('logged errors', () => {
  it('leave out the request body a body-parser error carries, and a database error’s statement, at any depth of causes', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const parserError = Object.assign(new Error('too many parameters'), { type: 'parameters.too.many', status: 400, body: 'AuthToken=secret-form-field' });
    const wrapped = Object.assign(new Error('request failed', { cause: parserError }), { sql: 'select secret', body: '{"secret-json":1}' });
    logger.error({ err: parserError }, 'request failed');
    logger.error({ err: wrapped }, 'request failed');
    const [first, second] = lines.map((line) => JSON.parse(line));
    expect(first.err).toMatchObject({ status: 400, message: 'too many parameters' });
    expect(first.err).not.toHaveProperty('body');
    expect(second.err).not.toHaveProperty('body');
    expect(second.err).not.toHaveProperty('sql');
    expect(second.err.cause).not.toHaveProperty('body');
    expect(lines.join('\n')).not.toMatch(/secret-form-field|secret-json|select secret/);
  });
});
