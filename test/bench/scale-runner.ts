// The scale section's runner rows (`npm run bench -- --only=scale`): what a campaign costs as its list
// grows. One execution with 10,000 pending contacts, then one with 1,000,000 (seeded by SQL: the
// import's speed is the lists rows' business), each run by one replica of the built server (runner on,
// instant simulated calls) until SCALE_DIALED calls have been dialed, then stopped. Reported as ratios
// of the same run: the claim statement's mean time (pg_stat_statements) and the replica's CPU per
// dialed call at 1M over 10k (targets ≤ 1.2: the claim reads what it takes, not what it skips), and
// another organization's GET /api/users/me and GET /api/executions/{id} p99 on the API process while
// the campaign dials over the same requests idle (target ≤ 3). PostgreSQL only.
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient } from './client.js';
import type { BenchDatabase } from './database.js';
import { cpuSeconds } from './runner.js';
import { startGateway, type ServerProcess } from './servers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

export const SCALE_PENDING = [10_000, 1_000_000] as const;
/** Calls dialed per measured run, the same whatever the list's size. */
export const SCALE_DIALED = 3_000;
export const SCALE_CONCURRENCY = 100;
/** Requests per latency sample (sequential, one at a time, so each is a user's wait). */
const LATENCY_REQUESTS = 300;

export interface ScaleRun {
  pending: number;
  dialed: number;
  seconds: number;
  claimStatements: number;
  /** Mean execution time of the claim's row-picking statement, ms (pg_stat_statements). */
  claimMeanMs: number | null;
  replicaMsPerCall: number | null;
  idle: LatencyPair;
  during: LatencyPair;
}

interface LatencyPair {
  usersMeP99: number;
  executionP99: number;
}

export interface ScaleRunnerSummary {
  runs: ScaleRun[];
  claimRatio: number | null;
  cpuRatio: number | null;
  /** During over idle p99, the larger of the two requests, at each size. */
  latencyRatios: number[];
}

/** What is still running when the bench is torn down. */
const live = new Set<ServerProcess>();
export function killScaleRunnerBench(): void {
  for (const server of live) server.kill();
}

function cli<T>(databaseUrl: string, args: string[]): T {
  const result = spawnSync(process.execPath, [`${ROOT}dist/src/cli.js`, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as T;
}

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]!;

/** Sequential requests, each one's wait in ms; while `until` (if given) says go on, else LATENCY_REQUESTS of them. */
async function latencies(api: ApiClient, path: string, until?: () => boolean): Promise<number[]> {
  const waits: number[] = [];
  for (let index = 0; until ? until() || index < 20 : index < LATENCY_REQUESTS; index++) {
    const started = performance.now();
    const answer = await api.request('GET', path);
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    waits.push(performance.now() - started);
    if (until && index >= 10 * LATENCY_REQUESTS) break;
  }
  return waits;
}

async function sample(api: ApiClient, executionPath: string, until?: () => boolean): Promise<LatencyPair> {
  const [me, execution] = await Promise.all([latencies(api, '/api/users/me', until), latencies(api, executionPath, until)]);
  return { usersMeP99: p99(me), executionP99: p99(execution) };
}

/**
 * A seeding request, sent again once when the keep-alive socket it went out on had been closed by the
 * server meanwhile (the CLI's seconds between two requests outlast its keep-alive timeout).
 */
async function ok<T>(api: ApiClient, method: string, path: string, body?: unknown): Promise<T> {
  try {
    return await api.ok<T>(method, path, body);
  } catch (error) {
    if (!(error instanceof Error && error.cause instanceof Error && /other side closed|ECONNRESET/.test(error.cause.message))) throw error;
    return api.ok<T>(method, path, body);
  }
}

/** An organization, a simulator program over a flow, and `count` contacts by SQL (one statement). */
async function seedCampaign(client: pg.Client, api: ApiClient, organizationId: string, count: number): Promise<{ programId: string }> {
  const flow = (
    await ok<{ id: string }>(api, 'POST', '/api/call-flows', {
      name: 'Scale flow',
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'greet', type: 'say', label: 'Hello' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'greet', condition: 'answered' },
        { from: 'greet', to: 'end' },
      ],
    })
  ).id;
  const audience = (await ok<{ id: string }>(api, 'POST', '/api/audience', { name: 'Scale: everyone' })).id;
  await client.query(
    `insert into contacts (id, created_at, updated_at, organization_id, name, phone, attributes, opted_out)
     select gen_random_uuid(), now(), now(), $1, 'Scale ' || g, '+1332' || lpad(g::text, 7, '0'), '{}', false from generate_series(1, $2::int) g`,
    [organizationId, count],
  );
  const program = await ok<{ id: string }>(api, 'POST', '/api/programs', {
    name: 'Scale',
    kind: 'campaign',
    flowId: flow,
    audienceId: audience,
    maxConcurrentCalls: SCALE_CONCURRENCY,
    retryPolicy: { maxAttempts: 1, retryDelayMinutes: 30 },
  });
  await ok(api, 'POST', `/api/programs/${program.id}/activate`);
  return { programId: program.id };
}

/** A running execution of the program over its first `pending` contacts, as a start leaves it (rows and counters), by SQL. */
async function seedExecution(client: pg.Client, organizationId: string, programId: string, pending: number): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `insert into executions (id, created_at, updated_at, organization_id, program_id, status, total_contacts, contacts_pending, auto_pause_rules, node_counts, actual_start_at)
     values (gen_random_uuid(), now(), now(), $1, $2, 'running', $3, $3, '[]', '{}', now()) returning id`,
    [organizationId, programId, pending],
  );
  const executionId = rows[0]!.id;
  await client.query(
    `insert into execution_contacts (id, created_at, updated_at, organization_id, execution_id, contact_id, phone, status, reached_node_ids)
     select gen_random_uuid(), c.created_at, now(), c.organization_id, $2, c.id, c.phone, 'pending', '[]'
       from (select * from contacts where organization_id = $1 order by phone limit $3) c`,
    [organizationId, executionId, pending],
  );
  await client.query('analyze execution_contacts');
  return executionId;
}

async function dialed(client: pg.Client, executionId: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `select count(*) as n from calls where execution_id = $1 and status not in ('queued', 'ringing', 'in_progress')`,
    [executionId],
  );
  return Number(rows[0]!.n);
}

/** pg_stat_statements, readable from the bench database: the view lives where the extension is created (database.ts makes it in the maintenance database). */
async function statementsHere(database: BenchDatabase, client: pg.Client): Promise<boolean> {
  if (!database.statements) return false;
  return client.query('create extension if not exists pg_stat_statements').then(
    () => true,
    () => false,
  );
}

async function claimStatement(readable: boolean, admin: pg.Client): Promise<{ calls: number; meanMs: number | null }> {
  if (!readable) return { calls: 0, meanMs: null };
  const { rows } = await admin.query<{ calls: string; mean: number }>(
    `select sum(s.calls) as calls, sum(s.total_exec_time) / nullif(sum(s.calls), 0) as mean
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = current_database() and s.query ilike '%for update of ec skip locked%'`,
  );
  return { calls: Number(rows[0]?.calls ?? 0), meanMs: rows[0]?.mean === null || rows[0]?.mean === undefined ? null : Number(rows[0].mean) };
}

export async function scaleRunnerBench(database: BenchDatabase, log: (line: string) => void): Promise<ScaleRunnerSummary> {
  const setupLog = `${RESULTS}scale-runner-gateway.log`;
  writeFileSync(setupLog, '');
  const api = await startGateway(database.url, `bench_${randomBytes(24).toString('hex')}`, setupLog);
  live.add(api);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const runs: ScaleRun[] = [];
  try {
    const readable = await statementsHere(database, client);
    const campaign = cli<{ apiKey: string; organizationId: string }>(database.url, [
      'org:create',
      '--name',
      'Scale Campaign',
      '--email',
      'owner@scale.bench.test',
    ]);
    cli(database.url, ['credits:add', '--org', campaign.organizationId, '--amount', '1000000000', '--reason', 'bench scale']);
    const other = cli<{ apiKey: string; organizationId: string }>(database.url, [
      'org:create',
      '--name',
      'Scale Other',
      '--email',
      'owner@scale-other.bench.test',
    ]);
    const campaignApi = new ApiClient(api.base, campaign.apiKey);
    const otherApi = new ApiClient(api.base, other.apiKey);
    const largest = Math.max(...SCALE_PENDING);
    log(`  scale: seeding ${largest.toLocaleString('en')} contacts by SQL…`);
    const started = Date.now();
    const { programId } = await seedCampaign(client, campaignApi, campaign.organizationId, largest);
    // The other organization's own execution, read while the campaign dials.
    const { programId: otherProgram } = await seedCampaign(client, otherApi, other.organizationId, 10);
    const otherExecution = await seedExecution(client, other.organizationId, otherProgram, 10);
    await client.query(`update executions set status = 'completed', contacts_pending = 0, contacts_completed = 10 where id = $1`, [otherExecution]);
    log(`  scale: seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    for (const pending of SCALE_PENDING) {
      const executionId = await seedExecution(client, campaign.organizationId, programId, pending);
      await database.resetStatements();
      const idle = await sample(otherApi, `/api/executions/${otherExecution}`);
      const replicaLog = `${RESULTS}scale-runner-replica-${pending}.log`;
      writeFileSync(replicaLog, '');
      const replica = await startGateway(database.url, `bench_${randomBytes(24).toString('hex')}`, replicaLog, {
        env: { RUNNER_ENABLED: 'true', RUNNER_INTERVAL_MS: '100', DIALER_SPEED_MS: '0', DIALER_VOICE: 'false', DIALER_SEED: 'bench', LOG_LEVEL: 'warn' },
      });
      live.add(replica);
      const cpuBefore = cpuSeconds(replica.pid);
      const runStarted = Date.now();
      let count = 0;
      let done = false;
      const watcher = (async () => {
        while (!done) {
          count = await dialed(client, executionId);
          if (count >= SCALE_DIALED || Date.now() - runStarted > 300_000) done = true;
          else await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const during = await sample(otherApi, `/api/executions/${otherExecution}`, () => !done);
      await watcher;
      const cpuAfter = cpuSeconds(replica.pid);
      const seconds = (Date.now() - runStarted) / 1000;
      await client.query(`update executions set status = 'stopped', updated_at = now() where id = $1`, [executionId]);
      await replica.stop();
      live.delete(replica);
      const claim = await claimStatement(readable, client);
      const total = await dialed(client, executionId);
      const run: ScaleRun = {
        pending,
        dialed: total,
        seconds,
        claimStatements: claim.calls,
        claimMeanMs: claim.meanMs,
        replicaMsPerCall: cpuBefore === null || cpuAfter === null || total === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / total,
        idle,
        during,
      };
      runs.push(run);
      log(
        `  scale: ${pending.toLocaleString('en')} pending: ${total} dialed in ${seconds.toFixed(1)} s, claim ${claim.meanMs?.toFixed(2) ?? 'n/a'} ms × ${claim.calls}, ` +
          `replica ${run.replicaMsPerCall?.toFixed(2) ?? 'n/a'} CPU ms/call; p99 users/me ${idle.usersMeP99.toFixed(1)} → ${during.usersMeP99.toFixed(1)} ms, execution ${idle.executionP99.toFixed(1)} → ${during.executionP99.toFixed(1)} ms`,
      );
    }
  } catch (error) {
    // fetch's own message is "fetch failed": say what failed underneath.
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    throw cause ? new Error(`${(error as Error).message}${cause}`, { cause: error }) : error;
  } finally {
    await client.end();
    await api.stop();
    live.delete(api);
  }
  const [small, large] = runs;
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? b / a : null);
  return {
    runs,
    claimRatio: ratio(small?.claimMeanMs, large?.claimMeanMs),
    cpuRatio: ratio(small?.replicaMsPerCall, large?.replicaMsPerCall),
    latencyRatios: runs.map((run) => Math.max(run.during.usersMeP99 / run.idle.usersMeP99, run.during.executionP99 / run.idle.executionP99)),
  };
}

const fixed = (value: number | null, digits = 2) => (value === null ? 'n/a' : value.toFixed(digits));

export function scaleRunnerMarkdown(summary: ScaleRunnerSummary): string {
  const [small, large] = summary.runs;
  const lines = [
    `### Scale: the runner with ${SCALE_PENDING.map((n) => n.toLocaleString('en')).join(' and ')} pending contacts (PostgreSQL, ${SCALE_DIALED} calls dialed each, concurrency ${SCALE_CONCURRENCY})`,
    '',
    '| measure | 10k pending | 1M pending | ratio | target |',
    '|---|---|---|---|---|',
    `| claim statement, mean ms (pg_stat_statements) | ${fixed(small?.claimMeanMs ?? null, 3)} | ${fixed(large?.claimMeanMs ?? null, 3)} | ${fixed(summary.claimRatio)} | ≤ 1.2 |`,
    `| runner CPU ms per dialed call | ${fixed(small?.replicaMsPerCall ?? null)} | ${fixed(large?.replicaMsPerCall ?? null)} | ${fixed(summary.cpuRatio)} | ≤ 1.2 |`,
    `| other org's GET /api/users/me p99 ms, idle → during | ${fixed(small?.idle.usersMeP99 ?? null, 1)} → ${fixed(small?.during.usersMeP99 ?? null, 1)} | ${fixed(large?.idle.usersMeP99 ?? null, 1)} → ${fixed(large?.during.usersMeP99 ?? null, 1)} | | |`,
    `| other org's GET /api/executions/{id} p99 ms, idle → during | ${fixed(small?.idle.executionP99 ?? null, 1)} → ${fixed(small?.during.executionP99 ?? null, 1)} | ${fixed(large?.idle.executionP99 ?? null, 1)} → ${fixed(large?.during.executionP99 ?? null, 1)} | | |`,
    `| API p99 during / idle (the larger of the two) | ${fixed(summary.latencyRatios[0] ?? null)} | ${fixed(summary.latencyRatios[1] ?? null)} | | ≤ 3 |`,
  ];
  return lines.join('\n');
}
