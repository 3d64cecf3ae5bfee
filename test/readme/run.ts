// `npm run test:readme`: the README's ```sh blocks, run as written against a fresh server.
// - Blocks run in order in one bash (`set -euo pipefail`), so a variable set in one is there in the next.
// - `<!-- readme-runner: skip -->` on the line before a block leaves it out (a block that installs,
//   starts a server of its own or needs a PostgreSQL server); `<!-- readme-runner: server-stopped -->`
//   runs it with the server stopped and starts the server again after it (operator CLI commands on
//   the embedded database, which one process holds at a time — what the README tells a reader to do).
// - The server is the built one (`node dist/src/main.js`) on a free port with a fresh DATA_DIR in
//   .readme-run/, which is the blocks' working directory, so `cat .data/first-api-key` reads its key;
//   `localhost:4000` in the blocks is rewritten to that port.
// - Every `curl` fails on an HTTP status of 400 or more (a bash function adds `--fail-with-body -S`).
// One line per block, `N passed, N failed`; `--json FILE` writes {numPassedTests, numFailedTests}
// for .ci/run. A failed block stops the run: the blocks after it are counted failed, not run.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { Report } from '../faults/report.js';

const ROOT = join(import.meta.dirname, '..', '..');
const WORK = join(ROOT, '.readme-run');
const MARKER = /<!--\s*readme-runner:\s*(skip|server-stopped)\b[^>]*-->/;

export interface ReadmeBlock {
  line: number;
  heading: string;
  code: string;
  mode: 'run' | 'skip' | 'server-stopped';
}

/** The ```sh blocks of a markdown text, with the section they are in and the marker before them. */
export function extractBlocks(markdown: string): ReadmeBlock[] {
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
    blocks.push({ line: start + 1, heading, code: body.join('\n'), mode: marker ? (marker[1] as ReadmeBlock['mode']) : 'run' });
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
    if (block.mode === 'server-stopped') parts.push('stop_server');
    parts.push(code);
    if (block.mode === 'server-stopped') parts.push('start_server');
    parts.push(`echo; echo "::readme-runner:ok ${index}"`);
  });
  return parts.join('\n') + '\n';
}

async function main(): Promise<number> {
  const jsonFlag = process.argv.indexOf('--json');
  const jsonFile = jsonFlag >= 0 ? process.argv[jsonFlag + 1] : undefined;
  const readme = process.argv.find((arg) => arg.endsWith('.md')) ?? join(ROOT, 'README.md');
  const name = basename(readme);
  const all = extractBlocks(readFileSync(readme, 'utf8'));
  const blocks = all.filter((block) => block.mode !== 'skip');
  const report = new Report();
  report.section(`README blocks (${blocks.length} to run, ${all.length - blocks.length} skipped by their marker)`);

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
      report.check(`${name}:${block.line} (${block.heading})${block.mode === 'server-stopped' ? ', server stopped' : ''}`, true);
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
    const where = `${name}:${block.line} (${block.heading})`;
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
