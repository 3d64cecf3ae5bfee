// `npm test` (and `npm run test:all` with `--all`): the typecheck beside jest rather than before it.
// tsc is one single-threaded process of about a minute of CPU; run first, it left one core of a 2-core
// machine idle for that minute (or, on a busy laptop, gave the other work a core to itself), and jest's
// two workers waited for it. Beside jest it takes its share of the CPU with them. Its output is kept
// and printed after jest's, so the two do not interleave; either failing fails the command. Arguments
// after `--` go to jest (`npm test -- test/voice/sts.test.ts`).
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const all = args[0] === '--all';
const jestArgs = all ? args.slice(1) : ['--config', 'jest.core.config.mjs', ...args];
const tsc = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname;

function run(command, commandArgs, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (capture) {
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
    }
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const typecheck = (async () => {
  for (const project of ['tsconfig.json', 'console/tsconfig.json']) {
    const result = await run(process.execPath, [tsc, '-p', project, '--noEmit'], true);
    if (result.code !== 0) return { ...result, project };
  }
  return { code: 0, output: '', project: null };
})();
const jest = run(
  process.execPath,
  [
    '--experimental-vm-modules',
    '--no-warnings=ExperimentalWarning',
    '--liftoff-only',
    new URL('../../node_modules/jest/bin/jest.js', import.meta.url).pathname,
    ...jestArgs,
  ],
  false,
);

const [types, tests] = await Promise.all([typecheck, jest]);
if (types.code !== 0) {
  process.stderr.write(`\nThe typecheck failed (tsc -p ${types.project}):\n${types.output}`);
} else {
  process.stderr.write('The typecheck passed (tsc: the gateway, its tests and the console).\n');
}
process.exit(types.code !== 0 ? types.code : tests.code);
