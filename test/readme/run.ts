// `npm run test:readme`: the ```sh blocks of README.md and of every guide in docs/, run as written
// against a fresh server.
// - The files are read in the order of GUIDE_FILES (src/platform/guide-files.ts), and their blocks run in
//   that order in one bash (`set -euo pipefail`), so a variable set in one block is there in the next,
//   also in a later page (the README's tour, then Getting started, … then the development pages).
//   `npm run test:readme -- docs/voice.md …` runs only the files named, in the order named.
// - `<!-- readme-runner: skip (why) -->` on the line before a block leaves it out (a block that installs,
//   starts a server of its own or needs a PostgreSQL server); a skip without its reason fails the run; `<!-- readme-runner: server-stopped -->`
//   runs it with the server stopped and starts the server again after it (operator CLI commands on
//   the embedded database, which one process holds at a time — what the README tells a reader to do);
//   `<!-- readme-runner: restarts-server -->` stops the server and runs the block with its `npm start`
//   replaced by the runner's own start (in the background, until /readyz answers), so the variables the
//   block sets or exports reach the server, as they would the reader's (a guide that starts the
//   gateway with other settings, or restarts it).
// - The server is the built one (`node dist/src/main.js`) on a free port with a fresh DATA_DIR in
//   .readme-run/, which is the blocks' working directory, so `cat .data/first-api-key` reads its key;
//   `localhost:4000` in the blocks is rewritten to that port.
// - Every `curl` fails on an HTTP status of 400 or more (a bash function adds `--fail-with-body -S`).
// One line per block (`--verbose`: with what it printed), `N passed, N failed`; `--json FILE` writes {numPassedTests, numFailedTests}
// for .ci/run. A failed block stops the run: the blocks after it are counted failed, not run.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { GUIDE_FILES } from '../../src/platform/guide-files.js';
import { Report } from '../faults/report.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORK = join(ROOT, '.readme-run');
const MARKER = /<!--\s*readme-runner:\s*(skip|server-stopped|restarts-server)\b([^>]*)-->/;

export interface ReadmeBlock {
  /** The file's path in the repository, set by the runner (extractBlocks leaves it empty). */
  file: string;
  line: number;
  heading: string;
  code: string;
  mode: 'run' | 'skip' | 'server-stopped' | 'restarts-server';
  /** What the marker says after its mode: for a skip, why (required). */
  reason: string;
}

/** The ```sh blocks of a markdown text, with the section they are in and the marker before them. */
export function extractBlocks(markdown: string, file = ''): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    if (line.trim() !== '```sh') continue;
    let previous = i - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const marker = previous >= 0 ? MARKER.exec(lines[previous]!) : null;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
    blocks.push({
      file,
      line: start + 1,
      heading,
      code: body.join('\n'),
      mode: marker ? (marker[1] as ReadmeBlock['mode']) : 'run',
      reason: marker ? marker[2]!.trim().replace(/^\((.*)\)$/, '$1') : '',
    });
  }
  return blocks;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The command a restarts-server block starts the gateway with. */
const NPM_START = 'npm start';

const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** The whole bash script: helpers, the server started, then each block between markers. */
function script(blocks: ReadmeBlock[], port: number, logFile: string): string {
  const parts = [
    'set -euo pipefail',
    `export PORT=${port} HOST=127.0.0.1 DATA_DIR=${quote(join(WORK, '.data'))} LOG_LEVEL=warn RUNNER_INTERVAL_MS=200 DIALER_SPEED_MS=50`,
    'unset DATABASE_URL BOOTSTRAP_API_KEY',
    'curl() { command curl --fail-with-body -S "$@"; }',
    'SERVER_PID=',
    'start_server() {',
    `  node ${quote(join(ROOT, 'dist/src/main.js'))} >>${quote(logFile)} 2>&1 &`,
    '  SERVER_PID=$!',
    `  for _ in $(seq 150); do command curl -sf http://127.0.0.1:${port}/readyz >/dev/null 2>&1 && return 0; sleep 0.2; done`,
    '  echo "the server did not become ready"; return 1',
    '}',
    'stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=; }',
    'trap \'[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; true\' EXIT',
    'start_server',
  ];
  blocks.forEach((block, index) => {
    const code = block.code.replaceAll('localhost:4000', `localhost:${port}`);
    parts.push(`echo "::readme-runner:begin ${index}"`);
    if (block.mode === 'server-stopped' || block.mode === 'restarts-server') parts.push('stop_server');
    parts.push(block.mode === 'restarts-server' ? code.replaceAll(NPM_START, 'start_server') : code);
    if (block.mode === 'server-stopped') parts.push('start_server');
    parts.push(`echo; echo "::readme-runner:ok ${index}"`);
  });
  return parts.join('\n') + '\n';
}

async function main(): Promise<number> {
  const jsonFlag = process.argv.indexOf('--json');
  const jsonFile = jsonFlag >= 0 ? process.argv[jsonFlag + 1] : undefined;
  const verbose = process.argv.includes('--verbose');
  const named = process.argv.slice(2).filter((arg) => arg.endsWith('.md'));
  const files = named.length > 0 ? named : [...GUIDE_FILES];
  const all = files.flatMap((file) => extractBlocks(readFileSync(join(ROOT, file), 'utf8'), file));
  const blocks = all.filter((block) => block.mode !== 'skip');
  const report = new Report();
  report.section(`Shell blocks of ${files.length} files (${blocks.length} to run, ${all.length - blocks.length} skipped by their marker)`);
  for (const block of all.filter((block) => block.mode === 'restarts-server' && !block.code.includes(NPM_START))) {
    report.check(`${block.file}:${block.line} (${block.heading}) restarts the server with npm start`, false, 'a restarts-server block runs `npm start`');
  }
  for (const block of all.filter((block) => block.mode === 'skip')) {
    if (block.reason) report.note(`skipped ${block.file}:${block.line} (${block.heading}): ${block.reason}`);
    else report.check(`${block.file}:${block.line} (${block.heading}) is skipped with its reason`, false, 'write why after "skip"');
  }

  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const logFile = join(WORK, 'server.log');
  const port = await freePort();
  const bash = spawn('bash', ['-c', script(blocks, port, logFile)], { cwd: WORK, stdio: ['ignore', 'pipe', 'pipe'] });

  const passed = new Set<number>();
  let output = '';
  let current = -1;
  const onLine = (line: string) => {
    const begin = /^::readme-runner:begin (\d+)$/.exec(line);
    const ok = /^::readme-runner:ok (\d+)$/.exec(line);
    if (begin) {
      current = Number(begin[1]);
      output = '';
    } else if (ok) {
      const block = blocks[Number(ok[1])]!;
      passed.add(Number(ok[1]));
      const mode = block.mode === 'server-stopped' ? ', server stopped' : block.mode === 'restarts-server' ? ', server restarted by it' : '';
      report.check(`${block.file}:${block.line} (${block.heading})${mode}`, true);
      if (verbose)
        output
          .trimEnd()
          .split('\n')
          .forEach((text) => report.note(text));
    } else output += `${line}\n`;
  };
  let pending = '';
  const feed = (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    lines.forEach(onLine);
  };
  bash.stdout.on('data', feed);
  bash.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code: number = await new Promise((resolve) => bash.on('close', (exit) => resolve(exit ?? 1)));
  if (pending) onLine(pending);

  blocks.forEach((block, index) => {
    if (passed.has(index)) return;
    const where = `${block.file}:${block.line} (${block.heading})`;
    if (index === current) report.check(where, false, `exit ${code}; its output:\n${output.trimEnd().split('\n').slice(-30).join('\n')}`);
    else report.check(where, false, index < current || current < 0 ? 'the server did not start' : 'not run: an earlier block failed');
  });
  if (code !== 0 || passed.size !== blocks.length) {
    console.log(`\n--- last lines of ${logFile}`);
    try {
      console.log(readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n'));
    } catch {
      console.log('(no log)');
    }
  }
  const { passed: ok, failed } = report.summary();
  console.log(`\n${ok} passed, ${failed} failed`);
  if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ numPassedTests: ok, numFailedTests: failed }));
  if (failed === 0) rmSync(WORK, { recursive: true, force: true });
  else console.log(`the server's data and log are kept in ${WORK}`);
  return failed === 0 && ok > 0 ? 0 : 1;
}

process.exit(await main());
