// `npm run bench`: seeds a realistic data set through the gateway, proves the hand-written baseline
// answers the same JSON and PostGraphile the same data, then drives the same requests at all three
// (interleaved, medians) and reports the gateway as a ratio of the baseline and of PostGraphile. A measurement, not a test: a missed target still exits 0; a
// mismatch, a dead server or any other failure exits 1. Everything it started goes away on exit.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiClient } from './client.js';
import { openBenchDatabase, type BenchDatabase } from './database.js';
import { checkEquivalence, EquivalenceError } from './equivalence.js';
import { benchRequests, type BenchRequest } from './kinds.js';
import { measure, median, statementsPerRequest, type RunResult } from './measure.js';
import { parseOptions, type BenchOptions } from './options.js';
import { machine, markdown, summarize, type KindResult } from './report.js';
import { BENCH_METRICS_TOKEN, rssMb, startBaselineProcess, startGateway, startPostGraphileProcess, type ServerProcess } from './servers.js';
import { seed } from './seed.js';
import { killRunnerBench, runnerBench, runnerMarkdown } from './runner.js';
import { killVoiceBench, voiceBench, voiceMarkdown } from './voice.js';
import { killScaleRunnerBench, scaleRunnerBench, scaleRunnerMarkdown } from './scale-runner.js';
import { killScaleBench, scaleBench, scaleMarkdown } from './scale/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

const log = (line: string) => process.stderr.write(`${line}\n`);
const round1 = (value: number) => Math.round(value * 10) / 10;
const brief = (run: RunResult) =>
  `${run.server} ${Math.round(run.rps)} req/s p50 ${round1(run.p50)} p99 ${round1(run.p99)} ms ` +
  `CPU ${run.cpuMsPerRequest.toFixed(2)} (sys ${run.systemMsPerRequest.toFixed(2)})${run.postgresMsPerRequest === null ? '' : ` + PG ${run.postgresMsPerRequest.toFixed(2)}`} ms/req` +
  `${run.non2xx + run.errors > 0 ? ` non-2xx ${run.non2xx} errors ${run.errors}` : ''}`;

/** What must go away on any exit: servers first, then the database. */
const state: { gateway?: ServerProcess; baseline?: ServerProcess; postgraphile?: ServerProcess; database?: BenchDatabase } = {};

async function cleanup(): Promise<void> {
  await Promise.all([state.gateway?.stop(), state.baseline?.stop(), state.postgraphile?.stop()]);
  await state.database?.close();
}

/** An operator command through the CLI (on PostgreSQL it runs beside the server); its last JSON line. */
function cli<T>(databaseUrl: string, args: string[]): T {
  const result = spawnSync(process.execPath, [`${ROOT}dist/src/cli.js`, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as T;
}

/** Organization B through the operators' CLI. */
function createOrganization(databaseUrl: string): { apiKey: string; organizationId: string } {
  return cli(databaseUrl, ['org:create', '--name', 'Bench Other', '--email', 'owner@other.bench.test']);
}

/** Credits the operator's way: starting an execution needs at least one (the runner is off, so none is spent). */
function grantCredits(databaseUrl: string, organizationId: string): void {
  cli(databaseUrl, ['credits:add', '--org', organizationId, '--amount', '1000000', '--reason', 'bench seed']);
}

/** The gateway's own view of its memory (prom-client's default metrics), in MB: where its RSS goes. */
async function gatewayMemory(gateway: ServerProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${gateway.base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
  const names = ['process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes'];
  const memory: Record<string, number> = {};
  for (const name of names) {
    const match = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
    if (match) memory[name.replace(/_bytes$/, '_mb')] = Math.round(Number(match[1]) / 1024 / 102.4) / 10;
  }
  // The young generation's size apart: V8 grows it to its maximum while allocation is fast (start-up, load), and it is resident.
  for (const space of ['new', 'old', 'code']) {
    const match = new RegExp(`^nodejs_heap_space_size_total_bytes\\{space="${space}"\\} (\\S+)`, 'm').exec(text);
    if (match) memory[`heap_${space}_space_total_mb`] = Math.round(Number(match[1]) / 1024 / 102.4) / 10;
  }
  return memory;
}

async function measureKind(request: BenchRequest, key: string, options: BenchOptions, database: BenchDatabase): Promise<KindResult> {
  const { gateway, baseline } = state as Required<typeof state>;
  // PostGraphile runs where it answers the same data (the agents page and the two nested queries).
  const peer = request.peer ? (state.postgraphile ?? null) : null;
  const settings = { duration: options.duration, connections: options.connections };
  const postgres = () => database.postgresPids();
  const statements = {
    gateway: await statementsPerRequest(gateway, key, request, database),
    baseline: await statementsPerRequest(baseline, key, request, database),
    postgraphile: peer ? await statementsPerRequest(peer, key, request, database) : null,
  };
  if (options.warmup > 0) {
    for (const server of [gateway, baseline, ...(peer ? [peer] : [])]) await measure(server, key, request, { ...settings, duration: options.warmup });
  }
  const rounds: KindResult['rounds'] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const ours = await measure(gateway, key, request, settings, postgres);
    const theirs = await measure(baseline, key, request, settings, postgres);
    const peers = peer ? await measure(peer, key, request, settings, postgres) : null;
    rounds.push({ gateway: ours, baseline: theirs, postgraphile: peers });
    log(`  ${request.kind} round ${round}/${options.rounds}: ${brief(ours)} | ${brief(theirs)}${peers ? ` | ${brief(peers)}` : ''}`);
  }
  const rate = Math.max(1, Math.floor(median(rounds.map((round) => round.baseline.rps)) / 2));
  const fixedGateway = await measure(gateway, key, request, { ...settings, rate }, postgres);
  const fixedBaseline = await measure(baseline, key, request, { ...settings, rate }, postgres);
  log(`  ${request.kind} at ${rate} req/s: ${brief(fixedGateway)} | ${brief(fixedBaseline)}`);
  return { request, rounds, fixed: { rate, gateway: fixedGateway, baseline: fixedBaseline }, statements };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  if (loadAtStart > 0.5) log(`Note: the 1-minute load average is ${loadAtStart.toFixed(2)}; other work on this machine skews the numbers.`);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}.gitignore`, '*\n!.gitignore\n');
  for (const file of readdirSync(RESULTS)) if (file.startsWith('mismatch-')) rmSync(`${RESULTS}${file}`);

  const voiceOnly = options.kinds.length === 0 && !options.runner && !options.scale;
  if (voiceOnly && options.pglite) return voiceSection(null, options);
  log(options.databaseUrl ? 'Creating the database gateway_bench on DATABASE_URL…' : 'Starting a throwaway PostgreSQL cluster…');
  let database: BenchDatabase;
  try {
    database = state.database = await openBenchDatabase(options.databaseUrl, options.keepDatabase);
  } catch (error) {
    // The voice section alone can do without PostgreSQL: the server then runs on its embedded PGlite.
    if (!voiceOnly) throw error;
    log(`  no PostgreSQL (${error instanceof Error ? error.message : String(error)}): the voice section runs on PGlite`);
    return voiceSection(null, options);
  }
  if (!database.statements) log('  pg_stat_statements is not available on this server: SQL/request will read n/a');
  if (options.kinds.length === 0) {
    if (options.runner) process.stdout.write(`\n${runnerMarkdown(await runnerBench(database, options.rounds, log))}\n`);
    if (options.scale) process.stdout.write(`\n${scaleRunnerMarkdown(await scaleRunnerBench(database, log))}\n`);
    if (options.voice) await voiceSection(database, options);
    if (options.scale) await scaleSection(database, options);
    return;
  }

  // A fresh key per run for organization A (the measured one); never printed or stored.
  const key = `bench_${randomBytes(24).toString('hex')}`;
  const gatewayLog = `${RESULTS}gateway.log`;
  writeFileSync(gatewayLog, '');
  state.gateway = await startGateway(database.url, key, gatewayLog);
  log(`Gateway up on port ${state.gateway.port} (log: ${gatewayLog}); seeding through its REST door…`);
  const other = createOrganization(database.url);
  const orgA = new ApiClient(state.gateway.base, key);
  const organizationId = (await orgA.get<{ id: string }>('/api/organization')).id;
  grantCredits(database.url, organizationId);
  grantCredits(database.url, other.organizationId);
  const seeded = await seed(orgA, new ApiClient(state.gateway.base, other.apiKey), log);
  log(`Seeded in ${seeded.seconds.toFixed(1)} s: ${JSON.stringify(seeded.counts)}`);
  await database.analyze();
  // The load is measured on a fresh process (as after a deploy), so its RSS is the requests' and not the seeding's.
  await state.gateway.stop();
  state.gateway = await startGateway(database.url, key, gatewayLog);

  const baselineLog = `${RESULTS}baseline.log`;
  writeFileSync(baselineLog, '');
  state.baseline = await startBaselineProcess(database.url, baselineLog);
  const postgraphileLog = `${RESULTS}postgraphile.log`;
  writeFileSync(postgraphileLog, '');
  state.postgraphile = await startPostGraphileProcess(database.url, postgraphileLog);
  const requests = benchRequests({ ...seeded, organizationId });
  const selected = options.kinds.map((kind) => requests[kind]);
  const equivalence = await checkEquivalence(state.gateway, state.baseline, state.postgraphile, key, selected, RESULTS);
  for (const check of equivalence) {
    log(
      `  same JSON: ${check.kind}, ${check.bytes} bytes${check.identical ? ', byte for byte' : ' (same JSON, other bytes)'}: ${check.shape}` +
        (check.postgraphile ? `; PostGraphile the same data (${check.postgraphile.bytes} bytes in its names)` : ''),
    );
  }
  const idleRss = { gateway: rssMb(state.gateway.pid), baseline: rssMb(state.baseline.pid), postgraphile: rssMb(state.postgraphile.pid) };
  const memoryIdle = await gatewayMemory(state.gateway);
  log(`Idle RSS (MB): ${JSON.stringify(idleRss)}; the gateway's own view: ${JSON.stringify(memoryIdle)}`);

  log(
    `Measuring ${selected.length} request kinds: ${options.rounds} × (gateway, baseline, PostGraphile where it answers) × ${options.duration} s, then a fixed-rate run each…`,
  );
  const results: KindResult[] = [];
  for (const request of selected) results.push(await measureKind(request, key, options, database));

  const memoryAfter = await gatewayMemory(state.gateway);
  log(`Gateway memory after the load: ${JSON.stringify(memoryAfter)}`);
  const summaries = results.map(summarize);
  const context = {
    machine: machine(database.serverVersion, loadAtStart),
    idleRssMb: idleRss,
    settings: { duration: options.duration, rounds: options.rounds, connections: options.connections, warmup: options.warmup },
    database: options.databaseUrl ? 'DATABASE_URL' : 'throwaway cluster, fsync off',
  };
  const table = markdown(summaries, context);
  process.stdout.write(`\n${table}\n`);
  const latest = `${RESULTS}latest.json`;
  writeFileSync(
    latest,
    `${JSON.stringify({ finishedAt: new Date().toISOString(), seconds: (Date.now() - started) / 1000, ...context, seed: seeded, gatewayMemoryIdle: memoryIdle, gatewayMemoryAfter: memoryAfter, equivalence, summaries, runs: results }, null, 2)}\n`,
  );
  log(`\nRaw numbers: ${latest}; total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (options.runner) process.stdout.write(`\n${runnerMarkdown(await runnerBench(database, options.rounds, log))}\n`);
  if (options.scale) process.stdout.write(`\n${scaleRunnerMarkdown(await scaleRunnerBench(database, log))}\n`);
  if (options.voice) await voiceSection(database, options);
  if (options.scale) await scaleSection(database, options);
}

/** The scale section (test/bench/scale/): a million contacts on PostgreSQL and PGlite. */
async function scaleSection(database: BenchDatabase, options: BenchOptions): Promise<void> {
  const scale = { rows: options.scaleRows, requests: options.scaleRequests, importRows: options.scaleImportRows, databases: options.scaleDatabases };
  log(`Scale: ${scale.rows.toLocaleString('en')} contacts on ${scale.databases.join(' and ')}…`);
  process.stdout.write(`\n${scaleMarkdown(await scaleBench(database, scale, log), scale)}\n`);
}

/** The speech-to-speech section (test/bench/voice.ts), on the bench's PostgreSQL or, without one, PGlite. */
async function voiceSection(database: BenchDatabase | null, options: BenchOptions): Promise<void> {
  const where = database && !options.pglite ? `PostgreSQL ${database.serverVersion}` : 'PGlite';
  const summary = await voiceBench(
    database && !options.pglite ? database.url : null,
    where,
    options.duration,
    options.voiceSteps,
    options.voiceProviders,
    options.voiceArrivals,
    log,
  );
  process.stdout.write(`\n${voiceMarkdown(summary)}\n`);
}

let exiting = false;
function finish(code: number): void {
  if (exiting) return;
  exiting = true;
  cleanup()
    .catch((error: unknown) => log(`cleanup: ${error instanceof Error ? error.message : String(error)}`))
    .finally(() => process.exit(code));
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`\n${signal}: stopping the servers and removing the database…`);
    finish(130);
  });
}
// Last resort when something exits the process without finish(): no orphan servers or clusters.
process.on('exit', () => {
  killRunnerBench();
  killScaleRunnerBench();
  killVoiceBench();
  killScaleBench();
  state.gateway?.kill();
  state.baseline?.kill();
  state.postgraphile?.kill();
  state.database?.destroySync();
});

main().then(
  () => finish(0),
  (error: unknown) => {
    if (exiting) return; // a signal is already taking everything down; what failed after it is its echo
    log(
      error instanceof EquivalenceError
        ? `\nEquivalence check failed: ${error.message}`
        : `\nBench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    finish(1);
  },
);
