import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The JSON lines of `npm start` (src/common/logger.ts, batchedStdout: pino's destination with minLength and periodicFlush) in a process of its own whose
// stdout is a file: what is in the file while lines wait, and after the process ends by each way out.
const LOGGER = new URL('../../dist/src/common/logger.js', import.meta.url).href;
const CHILD = `
import { statSync } from 'node:fs';
const { createLogger, STDOUT_BATCH } = await import(process.argv[2]);
const [file, scenario] = process.argv.slice(3);
const seen = () => statSync(file).size;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
if (scenario === 'waits') {
  STDOUT_BATCH.ms = 300;
  const started = Date.now();
  const logger = createLogger('info');
  logger.info('one');
  await sleep(50);
  const after50ms = seen();
  // The process stays busy: the periodic flush writes the line while it runs.
  while (seen() === 0 && Date.now() - started < 10_000) await sleep(10);
  console.error(JSON.stringify({ after50ms, writtenAfterMs: Date.now() - started }));
} else if (scenario === 'idle') {
  STDOUT_BATCH.ms = 60_000;
  const logger = createLogger('info');
  logger.info('one');
  // Nothing else keeps the process: it ends at once, and its line is written as it exits.
} else if (scenario === 'full') {
  STDOUT_BATCH.ms = 60_000;
  const logger = createLogger('info');
  for (let i = 0; i < 40; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'line');
  await sleep(100);
  console.error(JSON.stringify({ after100ms: seen() }));
  process.exit(0);
} else if (scenario === 'exit') {
  STDOUT_BATCH.ms = 60_000;
  const logger = createLogger('info');
  logger.info('one');
  logger.warn('two');
  process.exit(3);
}
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-log-'));
  writeFileSync(join(dir, 'child.mjs'), CHILD);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(scenario: string): { lines: { msg: string; i?: number }[]; observed: Record<string, number>; status: number | null } {
  const out = join(dir, `${scenario}.log`);
  const fd = openSync(out, 'w');
  try {
    const result = spawnSync(process.execPath, [join(dir, 'child.mjs'), LOGGER, out, scenario], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
      timeout: 20_000,
    });
    const lines = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; i?: number });
    return { lines, observed: result.stderr ? (JSON.parse(result.stderr) as Record<string, number>) : {}, status: result.status };
  } finally {
    closeSync(fd);
  }
}

it('a line waits for others, then leaves at the flush interval while the process runs', () => {
  const { lines, observed, status } = run('waits');
  expect(observed.after50ms).toBe(0);
  expect(observed.writtenAfterMs).toBeGreaterThanOrEqual(250);
  expect(observed.writtenAfterMs).toBeLessThan(10_000);
  expect(status).toBe(0);
  expect(lines.map((line) => line.msg)).toEqual(['one']);
});

it('a process with nothing else to do ends without waiting for the flush interval, its line written', () => {
  const started = Date.now();
  const { lines, status } = run('idle');
  // The interval is a minute: the timer did not hold the process, and the exit wrote the line.
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(status).toBe(0);
  expect(lines.map((line) => line.msg)).toEqual(['one']);
});

it('4 KiB of lines leave together without waiting; what is left over is written at process.exit', () => {
  const { lines, observed, status } = run('full');
  expect(status).toBe(0);
  const all = readFileSync(join(dir, 'full.log')).length;
  // 40 lines of about 170 bytes: the first batches are in the file, the tail is not yet.
  expect(observed.after100ms).toBeGreaterThanOrEqual(4096);
  expect(observed.after100ms).toBeLessThan(all);
  expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
});

it('a process that exits at once has written its waiting lines', () => {
  // The wait is a minute: only the exit can have written them.
  const { lines, status } = run('exit');
  expect(status).toBe(3);
  expect(lines.map((line) => line.msg)).toEqual(['one', 'two']);
});
