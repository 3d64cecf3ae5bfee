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
