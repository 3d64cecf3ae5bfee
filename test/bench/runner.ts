// The bench's `runner` section (`npm run bench -- --only=runner`, also part of the default run): one
// campaign of 10,000 contacts at 100 concurrent calls, instant simulated calls (DIALER_SPEED_MS=0,
// DIALER_VOICE=false: the dialer's seeded walk, no conversation), run by 1 and by 2 processes of the
// real built server (`node dist/src/main.js`, runner on) on the bench's PostgreSQL, interleaved,
// medians quoted. Each run gets a fresh execution of the same program, a pg_stat_statements reset
// before it and SQL checks after it: every contact dialed exactly once, no contact dialed twice, the
// counters and credits exact. A run that breaks any of these fails the bench.
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ApiClient } from './client.js';
import type { BenchDatabase } from './database.js';
import { median } from './measure.js';
import { startGateway, type ServerProcess } from './servers.js';
import { freePort } from '../support/pg-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

export const RUNNER_CONTACTS = 10_000;
export const RUNNER_CONCURRENCY = 100;
/** The runners' tick (RUNNER_INTERVAL_MS); between ticks a runner claims again as soon as calls end. */
export const RUNNER_BENCH_INTERVAL_MS = 100;

export interface RunnerRun {
  replicas: number;
  round: number;
  /** Dialed contacts over the time from the execution's start to its last recorded call. */
  callsPerSecond: number;
  seconds: number;
  dialed: number;
  statements: number | null;
  statementsPerContact: number | null;
  /** Claims that placed calls (distinct claim tokens among the execution's calls): how the work was batched. */
  claims: number;
  /** The execution's calls by the replica that claimed them (the runner id in their claim token), most first. */
  callsByReplica: number[];
  /** Contacts with more than one call in the execution (must be 0). */
  dialedTwice: number;
  /** Contacts of the execution without any call (must be 0). */
  notDialed: number;
  /** The execution's counters and credits against its rows. */
  countersExact: boolean;
  loadAverage: number;
  /** CPU seconds (user + system, /proc) over the run: the replica processes, and the PostgreSQL backends of the bench database. */
  cpu: RunCpu | null;
  /** Seconds backends of the bench database spent waiting for a lock (sampled every poll, ~100 ms: waiting backends × interval). */
  lockWaitSeconds: number;
  /** Backends sampled waiting for a lock, by the statement's kind (waitKind). */
  waits: Record<string, number>;
}

/** What a statement waiting for a lock was doing, by its first words: which row the replicas queue on. */
export function waitKind(statement: string): string {
  const text = statement.trim().toLowerCase();
  if (/^update executions set progress_event_at/.test(text)) return 'progress event (execution row)';
  if (/^update executions|from executions .*for (no key )?update|select .* from executions where id = \S+ for update/.test(text)) return 'execution row';
  if (text.includes('organizations')) return 'organization row (credits)';
  if (text.includes('execution_contacts')) return 'execution_contacts rows';
  if (text.includes('insert into events') || text.includes('events')) return 'events';
  if (text.includes('calls')) return 'calls rows';
  return text.split(' ').slice(0, 3).join(' ');
}

export interface RunCpu {
  replicaSeconds: number;
  /** Each replica's CPU seconds over the run, in start order. */
  replicaEach: number[];
  /** What postgresSeconds covers: the whole cluster (the postmaster and all its children), or only the bench database's backends (a server elsewhere). */
  postgres: 'cluster' | 'bench database backends';
  postgresSeconds: number;
  /** CPU milliseconds per dialed contact, replicas and PostgreSQL together. */
  msPerContact: number;
  replicaMsPerContact: number;
  postgresMsPerContact: number;
  /** (replicas + PostgreSQL CPU seconds) / wall seconds of the run: how many cores they kept busy. */
  coresBusy: number;
}

export interface RunnerSummary {
  contacts: number;
  concurrency: number;
  rounds: number;
  intervalMs: number;
  callsPerSecond: { one: number; two: number; ratio: number };
  statementsPerContact: { one: number | null; two: number | null };
  dialedTwice: number;
  loadAverage: { start: number; end: number };
  /** Medians per replica count: CPU ms per dialed contact, cores busy, lock-wait seconds. */
  cpu: { one: CpuMedians | null; two: CpuMedians | null };
  /** CPU ms per dialed contact with two replicas over one's (medians; target ≤ 1.2). */
  cpuRatio: number | null;
  runs: RunnerRun[];
}

export interface CpuMedians {
  msPerContact: number;
  replicaMsPerContact: number;
  postgresMsPerContact: number;
  coresBusy: number;
  lockWaitSeconds: number;
}

/** The process's CPU seconds so far (utime + stime from /proc/<pid>/stat), or null when it cannot be read (gone, not Linux). */
export function cpuSeconds(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) start at its closing parenthesis: utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** A process's parent pid (the 4th field of /proc/<pid>/stat), or null when it cannot be read. */
function parentPid(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/**
 * The CPU seconds a PostgreSQL cluster has used so far: the postmaster's own (utime + stime), its
 * reaped children's (cutime + cstime: every backend and worker that has exited, whole lifetimes)
 * and every live child's (utime + stime). The difference of two readings is exactly what the cluster
 * used between them, backends that connected or exited in between included, and the background
 * processes (WAL writer, checkpointer, autovacuum) with them. Null when the postmaster is not on
 * this machine (a DATABASE_URL server elsewhere).
 */
export function clusterCpuSeconds(postmaster: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${postmaster}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: the 14th to 17th fields.
  let ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (parentPid(pid) !== postmaster) continue;
    const own = cpuSeconds(pid);
    if (own !== null) ticks += own * CLOCK_TICKS;
  }
  return ticks / CLOCK_TICKS;
}

/** The postmaster of the server `client` is connected to: its backend's parent, when that backend is a process of this machine. */
async function postmasterOf(client: pg.Client): Promise<number | null> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const parent = parentPid(rows[0]!.pid);
  return parent && parent > 1 && clusterCpuSeconds(parent) !== null ? parent : null;
}

/** USER_HZ: /proc's CPU times are in these ticks (100 on Linux everywhere but exotic builds). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * CPU used by a set of processes since it was first seen: each pid's CPU when first seen is its
 * start (0 for a backend that connected during the run), its last reading its end.
 */
class CpuMeter {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();

  constructor(private readonly newcomersStartAtZero: boolean) {}

  see(pids: Iterable<number>): void {
    for (const pid of pids) {
      const now = cpuSeconds(pid);
      if (now === null) continue;
      if (!this.first.has(pid)) this.first.set(pid, this.newcomersStartAtZero && this.started ? 0 : now);
      this.last.set(pid, now);
    }
  }

  private started = false;
  start(pids: Iterable<number>): void {
    this.see(pids);
    this.started = true;
  }

  get seconds(): number {
    let total = 0;
    for (const [pid, first] of this.first) total += (this.last.get(pid) ?? first) - first;
    return total;
  }
}

export class RunnerCheckError extends Error {}

/** What is still running when the bench is torn down by a signal or an error. */
const live: { gateway?: ServerProcess; replicas: Set<() => void> } = { replicas: new Set() };
export function killRunnerBench(): void {
  live.gateway?.kill();
  for (const kill of live.replicas) kill();
}

/** The operators' CLI beside the server: its last JSON line. */
function cli<T>(databaseUrl: string, args: string[]): T {
  const result = spawnSync(process.execPath, [`${ROOT}dist/src/cli.js`, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${args[0]} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as T;
}

/** A replica: the production entry with its runner on, dialing through the simulator at once. */
async function startReplica(
  databaseUrl: string,
  log: string,
): Promise<{ pid: number | undefined; stop(): Promise<void>; kill(): void; exited: () => string | null }> {
  const port = await freePort();
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, [`${ROOT}dist/src/main.js`], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      RUNNER_ENABLED: 'true',
      RUNNER_INTERVAL_MS: String(RUNNER_BENCH_INTERVAL_MS),
      DIALER_SPEED_MS: '0',
      DIALER_VOICE: 'false',
      DIALER_SEED: 'bench',
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  let exited: string | null = null;
  const kill = () => child.kill('SIGKILL');
  live.replicas.add(kill);
  child.once('exit', (code, signal) => {
    exited = `${code ?? signal}`;
    live.replicas.delete(kill);
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`a runner replica exited (${exited}) before it was ready; its log: ${log}`);
    if (Date.now() > deadline) throw new Error(`a runner replica was not ready within 60 s; its log: ${log}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid: child.pid,
    exited: () => exited,
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(timer);
    },
    kill() {
      if (!exited) child.kill('SIGKILL');
    },
  };
}

const FLOW = {
  name: 'Bench runner flow',
  nodes: [
    { id: 'start', type: 'start' },
    { id: 'greet', type: 'say', label: 'Say hello' },
    { id: 'vm', type: 'voicemail', label: 'Leave a message' },
    { id: 'end', type: 'end' },
  ],
  edges: [
    { from: 'start', to: 'greet', condition: 'answered' },
    { from: 'start', to: 'vm', condition: 'voicemail' },
    { from: 'greet', to: 'end' },
    { from: 'vm', to: 'end' },
  ],
};

/** An organization of its own with 10,000 contacts in one audience and a program over them, one attempt each. */
async function prepare(
  database: BenchDatabase,
  log: (line: string) => void,
  setupLog: string,
): Promise<{ api: ApiClient; gateway: ServerProcess; organizationId: string; programId: string }> {
  const gateway = await startGateway(database.url, `bench_${randomBytes(24).toString('hex')}`, setupLog);
  const org = cli<{ apiKey: string; organizationId: string }>(database.url, ['org:create', '--name', 'Bench Runner', '--email', 'owner@runner.bench.test']);
  cli(database.url, ['credits:add', '--org', org.organizationId, '--amount', '1000000', '--reason', 'bench runner']);
  const api = new ApiClient(gateway.base, org.apiKey);
  for (let first = 0; first < RUNNER_CONTACTS; first += 2000) {
    const contacts = Array.from({ length: Math.min(2000, RUNNER_CONTACTS - first) }, (_, k) => ({
      name: `Runner ${first + k}`,
      phone: `+1646${String(1_000_000 + first + k).padStart(7, '0')}`,
    }));
    await api.post('/api/contacts/import', { contacts });
  }
  const audience = await api.post<{ id: string }>('/api/audience', { name: 'Runner bench: everyone' });
  // Members in one statement (the REST door takes lists of ids; 10,000 of them is a seeding detail).
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `insert into audience_members (id, created_at, updated_at, organization_id, audience_id, contact_id)
       select gen_random_uuid(), now(), now(), organization_id, $2, id from contacts where organization_id = $1`,
      [org.organizationId, audience.id],
    );
  } finally {
    await client.end();
  }
  const flow = await api.post<{ id: string }>('/api/call-flows', FLOW);
  const program = await api.post<{ id: string }>('/api/programs', {
    name: 'Runner bench',
    kind: 'campaign',
    flowId: flow.id,
    audienceId: audience.id,
    maxConcurrentCalls: RUNNER_CONCURRENCY,
    retryPolicy: { maxAttempts: 1, retryDelayMinutes: 30 },
  });
  await api.post(`/api/programs/${program.id}/activate`);
  log(`  runner: organization with ${RUNNER_CONTACTS.toLocaleString('en')} contacts and a simulator program (concurrency ${RUNNER_CONCURRENCY}, one attempt)`);
  return { api, gateway, organizationId: org.organizationId, programId: program.id };
}

interface Checked {
  seconds: number;
  dialed: number;
  claims: number;
  callsByReplica: number[];
  dialedTwice: number;
  notDialed: number;
  countersExact: boolean;
}

/** What the run did, in SQL: calls per contact, and the execution's counters and credits against its rows. */
async function check(client: pg.Client, executionId: string): Promise<Checked> {
  const {
    rows: [calls],
  } = await client.query<{ dialed: string; claims: string; by_replica: string[]; twice: string; not_dialed: string }>(
    `select (select count(distinct execution_contact_id) from calls where execution_id = $1) as dialed,
            (select count(distinct claim_token) from calls where execution_id = $1) as claims,
            array(select count(*) from calls where execution_id = $1 group by split_part(claim_token, '#', 1) order by 1 desc) as by_replica,
            (select count(*) from (select execution_contact_id from calls where execution_id = $1 group by 1 having count(*) > 1) t) as twice,
            (select count(*) from execution_contacts ec where ec.execution_id = $1
                and not exists (select 1 from calls c where c.execution_contact_id = ec.id)) as not_dialed`,
    [executionId],
  );
  const {
    rows: [execution],
  } = await client.query<{
    seconds: number;
    total_contacts: number;
    contacts_completed: number;
    contacts_failed: number;
    contacts_pending: number;
    contacts_in_progress: number;
    credits_spent: number;
    completed_rows: string;
    failed_rows: string;
    charged: string;
  }>(
    `select extract(epoch from (select max(ended_at) from calls where execution_id = e.id) - e.actual_start_at)::float8 as seconds,
            e.total_contacts, e.contacts_completed, e.contacts_failed, e.contacts_pending, e.contacts_in_progress, e.credits_spent,
            (select count(*) from execution_contacts where execution_id = e.id and status = 'completed') as completed_rows,
            (select count(*) from execution_contacts where execution_id = e.id and status = 'failed') as failed_rows,
            (select coalesce(sum(credits_charged), 0) from calls where execution_id = e.id) as charged
       from executions e where e.id = $1`,
    [executionId],
  );
  const e = execution!;
  const countersExact =
    e.contacts_pending === 0 &&
    e.contacts_in_progress === 0 &&
    e.contacts_completed === Number(e.completed_rows) &&
    e.contacts_failed === Number(e.failed_rows) &&
    e.contacts_completed + e.contacts_failed === e.total_contacts &&
    e.credits_spent === Number(e.charged);
  return {
    seconds: e.seconds,
    dialed: Number(calls!.dialed),
    claims: Number(calls!.claims),
    callsByReplica: calls!.by_replica.map(Number),
    dialedTwice: Number(calls!.twice),
    notDialed: Number(calls!.not_dialed),
    countersExact,
  };
}

function cpuOf(
  replicaSeconds: number,
  postgresSeconds: number,
  dialed: number,
  wallSeconds: number,
  replicaEach: number[],
  postgres: RunCpu['postgres'],
): RunCpu | null {
  if (replicaSeconds === 0 && postgresSeconds === 0) return null;
  const contacts = Math.max(1, dialed);
  return {
    replicaSeconds,
    replicaEach,
    postgres,
    postgresSeconds,
    msPerContact: ((replicaSeconds + postgresSeconds) * 1000) / contacts,
    replicaMsPerContact: (replicaSeconds * 1000) / contacts,
    postgresMsPerContact: (postgresSeconds * 1000) / contacts,
    coresBusy: (replicaSeconds + postgresSeconds) / wallSeconds,
  };
}

async function oneRun(
  database: BenchDatabase,
  api: ApiClient,
  programId: string,
  replicas: number,
  round: number,
  log: (line: string) => void,
): Promise<RunnerRun> {
  const execution = await api.post<{ id: string }>(`/api/programs/${programId}/executions`, {});
  const processes: Awaited<ReturnType<typeof startReplica>>[] = [];
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    for (let i = 0; i < replicas; i++) processes.push(await startReplica(database.url, `${RESULTS}runner-${replicas}-${round}-${i}.log`));
    await database.resetStatements();
    const loadAverage = loadavg()[0]!;
    // CPU: the replicas' processes, and the bench database's backends (those connected now from their
    // reading now, those that connect during the run from zero; one that exits during the run is not counted).
    const backends = async () =>
      (await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')).rows.map(
        (row) => row.pid,
      );
    const replicaCpu = new CpuMeter(false);
    const postgresCpu = new CpuMeter(true);
    // The whole cluster when its postmaster is on this machine (every backend and background process,
    // those that exit during the run too); else the bench database's backends as pg_stat_activity lists them.
    const postmaster = await postmasterOf(client);
    const clusterAtStart = postmaster === null ? null : clusterCpuSeconds(postmaster);
    const replicaAtStart = processes.map((process) => cpuSeconds(process.pid) ?? 0);
    replicaCpu.start(processes.map((process) => process.pid!).filter(Boolean));
    postgresCpu.start(await backends());
    const startedAt = Date.now();
    await api.post(`/api/executions/${execution.id}/start`);
    // Polled on the bench database: these statements are counted, then taken off. Each poll also
    // samples the backends waiting for a lock and lists the backends (one statement).
    let polls = 0;
    let lockWaitSamples = 0;
    /** Backends sampled waiting for a lock, by what their statement was doing. */
    const waits: Record<string, number> = {};
    let lastPoll = Date.now();
    let lockWaitSeconds = 0;
    const deadline = Date.now() + 15 * 60_000;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      polls++;
      const { rows } = await client.query<{ status: string; waiting: string; pids: number[]; waiting_on: string[] | null }>(
        `select (select status from executions where id = $1) as status,
                (select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock') as waiting,
                array(select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()) as pids,
                array(select regexp_replace(left(query, 120), '\\s+', ' ', 'g') from pg_stat_activity
                       where datname = current_database() and wait_event_type = 'Lock') as waiting_on`,
        [execution.id],
      );
      for (const statement of rows[0]?.waiting_on ?? []) {
        const kind = waitKind(statement);
        waits[kind] = (waits[kind] ?? 0) + 1;
      }
      const polledAt = Date.now();
      lockWaitSamples += Number(rows[0]?.waiting ?? 0);
      lockWaitSeconds += (Number(rows[0]?.waiting ?? 0) * (polledAt - lastPoll)) / 1000;
      lastPoll = polledAt;
      postgresCpu.see(rows[0]?.pids ?? []);
      replicaCpu.see(processes.map((process) => process.pid!).filter(Boolean));
      if (rows[0]?.status === 'completed') break;
      if (rows[0]?.status !== 'running') throw new RunnerCheckError(`the execution went ${rows[0]?.status} instead of completing`);
      const dead = processes.find((process) => process.exited());
      if (dead) throw new Error(`a runner replica exited (${dead.exited()}) during the run`);
      if (Date.now() > deadline) throw new Error('the execution did not complete within 15 minutes');
    }
    const wallSeconds = (Date.now() - startedAt) / 1000;
    const clusterAtEnd = postmaster === null ? null : clusterCpuSeconds(postmaster);
    const replicaEach = processes.map((process, index) => (cpuSeconds(process.pid) ?? replicaAtStart[index]!) - replicaAtStart[index]!);
    replicaCpu.see(processes.map((process) => process.pid!).filter(Boolean));
    postgresCpu.see(await backends());
    const postgresSeconds = clusterAtStart !== null && clusterAtEnd !== null ? clusterAtEnd - clusterAtStart : postgresCpu.seconds;
    const counted = await database.statementCount();
    // The start request's own statements are few and stay in (a fraction of a statement per contact in 10,000).
    // The polls, and the one backends() listing at the end.
    const statements = counted === null ? null : counted - polls - 1;
    const checked = await check(client, execution.id);
    const run: RunnerRun = {
      replicas,
      round,
      callsPerSecond: checked.dialed / checked.seconds,
      seconds: checked.seconds,
      dialed: checked.dialed,
      statements,
      statementsPerContact: statements === null ? null : statements / Math.max(1, checked.dialed),
      claims: checked.claims,
      callsByReplica: checked.callsByReplica,
      dialedTwice: checked.dialedTwice,
      notDialed: checked.notDialed,
      countersExact: checked.countersExact,
      loadAverage,
      cpu: cpuOf(
        replicaCpu.seconds,
        postgresSeconds,
        checked.dialed,
        wallSeconds,
        replicaEach,
        clusterAtStart !== null && clusterAtEnd !== null ? 'cluster' : 'bench database backends',
      ),
      lockWaitSeconds,
      waits,
    };
    log(
      `  runner ${replicas} replica${replicas > 1 ? 's' : ''}, round ${round}: ${Math.round(run.callsPerSecond)} calls/s (${run.seconds.toFixed(1)} s), ` +
        `${run.statementsPerContact?.toFixed(2) ?? 'n/a'} statements/contact, ${(run.dialed / Math.max(1, run.claims)).toFixed(1)} calls per claim, calls by replica [${run.callsByReplica.join(', ')}], dialed twice ${run.dialedTwice}, not dialed ${run.notDialed}, counters ${run.countersExact ? 'exact' : 'WRONG'}, ` +
        `CPU ${run.cpu ? `${run.cpu.replicaMsPerContact.toFixed(2)} + ${run.cpu.postgresMsPerContact.toFixed(2)} ms/contact (replicas [${run.cpu.replicaEach.map((seconds) => seconds.toFixed(1)).join(', ')} s] + PostgreSQL ${run.cpu.postgres}), ${run.cpu.coresBusy.toFixed(2)} cores busy` : 'n/a'}, ` +
        `lock waits ${run.lockWaitSeconds.toFixed(1)} s (${lockWaitSamples} samples: ${JSON.stringify(waits)}), load ${loadAverage.toFixed(2)}`,
    );
    if (run.dialedTwice > 0 || run.notDialed > 0 || run.dialed !== RUNNER_CONTACTS || !run.countersExact) {
      throw new RunnerCheckError(`the run with ${replicas} replica(s) broke a rule: ${JSON.stringify(run)}`);
    }
    return run;
  } finally {
    await Promise.all(processes.map((process) => process.stop()));
    await client.end();
  }
}

export async function runnerBench(database: BenchDatabase, rounds: number, log: (line: string) => void): Promise<RunnerSummary> {
  const loadAtStart = loadavg()[0]!;
  for (const file of readdirSync(RESULTS)) if (file.startsWith('runner-') && file.endsWith('.log')) rmSync(`${RESULTS}${file}`);
  const setupLog = `${RESULTS}runner-setup.log`;
  writeFileSync(setupLog, '');
  const prepared = await prepare(database, log, setupLog);
  live.gateway = prepared.gateway;
  const runs: RunnerRun[] = [];
  try {
    await database.analyze();
    // BENCH_RUNNER_ROUNDS: fewer rounds for a quick look while developing (medians want 3 or more).
    const runCount = Number(process.env.BENCH_RUNNER_ROUNDS) || Math.max(3, rounds);
    log(`  runner: ${runCount} rounds of (1 replica, 2 replicas), interleaved`);
    for (let round = 1; round <= runCount; round++) {
      for (const replicas of [1, 2]) runs.push(await oneRun(database, prepared.api, prepared.programId, replicas, round, log));
    }
  } finally {
    await prepared.gateway.stop();
  }
  const of = (replicas: number) => runs.filter((run) => run.replicas === replicas);
  const one = median(of(1).map((run) => run.callsPerSecond));
  const two = median(of(2).map((run) => run.callsPerSecond));
  const perContact = (replicas: number) => (database.statements ? median(of(replicas).map((run) => run.statementsPerContact ?? 0)) : null);
  const summary: RunnerSummary = {
    contacts: RUNNER_CONTACTS,
    concurrency: RUNNER_CONCURRENCY,
    rounds: runs.length / 2,
    intervalMs: RUNNER_BENCH_INTERVAL_MS,
    callsPerSecond: { one, two, ratio: two / one },
    statementsPerContact: { one: perContact(1), two: perContact(2) },
    dialedTwice: runs.reduce((sum, run) => sum + run.dialedTwice, 0),
    loadAverage: { start: loadAtStart, end: loadavg()[0]! },
    cpu: { one: cpuMedians(of(1)), two: cpuMedians(of(2)) },
    cpuRatio: null,
    runs,
  };
  if (summary.cpu.one && summary.cpu.two) summary.cpuRatio = summary.cpu.two.msPerContact / summary.cpu.one.msPerContact;
  writeFileSync(`${RESULTS}runner.json`, `${JSON.stringify({ finishedAt: new Date().toISOString(), ...summary }, null, 2)}\n`);
  return summary;
}

function cpuMedians(runs: RunnerRun[]): CpuMedians | null {
  const measured = runs.filter((run) => run.cpu);
  if (measured.length === 0) return null;
  const of = (pick: (cpu: RunCpu) => number) => median(measured.map((run) => pick(run.cpu!)));
  return {
    msPerContact: of((cpu) => cpu.msPerContact),
    replicaMsPerContact: of((cpu) => cpu.replicaMsPerContact),
    postgresMsPerContact: of((cpu) => cpu.postgresMsPerContact),
    coresBusy: of((cpu) => cpu.coresBusy),
    lockWaitSeconds: median(measured.map((run) => run.lockWaitSeconds)),
  };
}

const RATIO_TARGET = 1.7;
const CPU_RATIO_TARGET = 1.2;
const STATEMENTS_TARGET = 4;

export function runnerMarkdown(summary: RunnerSummary): string {
  const fmt = (value: number | null, digits = 1) => (value === null ? 'n/a' : value.toFixed(digits));
  const mark = (ok: boolean) => (ok ? '✓' : '✗');
  const { one, two, ratio } = summary.callsPerSecond;
  const statements = summary.statementsPerContact;
  const worst = Math.max(statements.one ?? 0, statements.two ?? 0);
  return [
    `Campaign runner: ${summary.contacts.toLocaleString('en')} contacts, concurrency ${summary.concurrency}, instant simulated calls, ` +
      `medians of ${summary.rounds} interleaved runs; load average ${summary.loadAverage.start.toFixed(2)} at start, ${summary.loadAverage.end.toFixed(2)} at end`,
    '',
    '| replicas | calls/s | ratio to 1 (target ≥ 1.7) | statements / dialed contact (target ≤ 4) | contacts dialed twice |',
    '|---:|---:|---:|---:|---:|',
    `| 1 | ${Math.round(one).toLocaleString('en')} | 1.00× | ${fmt(statements.one)} | ${summary.runs.filter((run) => run.replicas === 1).reduce((sum, run) => sum + run.dialedTwice, 0)} |`,
    `| 2 | ${Math.round(two).toLocaleString('en')} | ${ratio.toFixed(2)}× (${mark(ratio >= RATIO_TARGET)}) | ${fmt(statements.two)} (${mark(worst <= STATEMENTS_TARGET)}) | ${summary.runs.filter((run) => run.replicas === 2).reduce((sum, run) => sum + run.dialedTwice, 0)} |`,
    '',
    `| replicas | CPU ms / dialed contact (replicas + PostgreSQL ${summary.runs[0]?.cpu?.postgres ?? ''}) | ratio to 1 (target ≤ ${CPU_RATIO_TARGET}) | cores busy (CPU s / wall s; the machine has ${availableParallelism()}) | lock waits (s, sampled) | contacts dialed twice |`,
    '|---:|---:|---:|---:|---:|---:|',
    ...(
      [
        [1, summary.cpu.one],
        [2, summary.cpu.two],
      ] as const
    ).map(([replicas, cpu]) => {
      const twice = summary.runs.filter((run) => run.replicas === replicas).reduce((sum, run) => sum + run.dialedTwice, 0);
      const ratio =
        replicas === 1 ? '1.00×' : summary.cpuRatio === null ? 'n/a' : `${summary.cpuRatio.toFixed(2)}× (${mark(summary.cpuRatio <= CPU_RATIO_TARGET)})`;
      return cpu
        ? `| ${replicas} | ${cpu.msPerContact.toFixed(2)} (${cpu.replicaMsPerContact.toFixed(2)} + ${cpu.postgresMsPerContact.toFixed(2)}) | ${ratio} | ${cpu.coresBusy.toFixed(2)} | ${cpu.lockWaitSeconds.toFixed(1)} | ${twice} |`
        : `| ${replicas} | n/a | n/a | n/a | n/a | ${twice} |`;
    }),
  ].join('\n');
}
