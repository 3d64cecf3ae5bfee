// One autocannon run against one server, with the server's largest RSS while it ran and the CPU it and
// PostgreSQL spent per answered request over exactly that run (cpu.ts); and the count of
// SQL statements per request, from pg_stat_statements around a few requests sent one at a time (under
// load, the requests still in flight when a run stops would blur the count).
import autocannon from 'autocannon';
import { CpuWindow } from './cpu.js';
import type { BenchDatabase } from './database.js';
import type { BenchRequest } from './kinds.js';
import { sampleRss, type ServerName, type ServerProcess } from './servers.js';

export interface RunResult {
  server: ServerName;
  /** Mean of autocannon's per-second samples. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  rssMaxMb: number | null;
  /** The server process's CPU milliseconds (user + system, all its threads) over the run, per request answered. */
  cpuMsPerRequest: number;
  /** The kernel's part of cpuMsPerRequest (system time: the sockets' writes and reads). */
  systemMsPerRequest: number;
  /** PostgreSQL's CPU milliseconds over the same run per request answered; null where its processes cannot be seen. */
  postgresMsPerRequest: number | null;
  /** The fixed rate asked for, when there was one. */
  rate?: number;
}

export interface RunSettings {
  duration: number;
  connections: number;
  /** Requests per second over all connections; unset = as fast as the server answers. */
  rate?: number;
}

const SETTLE_MS = 1000;

const headersOf = (key: string, request: { body?: string }) => ({ 'x-api-key': key, ...(request.body ? { 'content-type': 'application/json' } : {}) });

/** What a server is sent for `request`: PostGraphile gets its own query (POST /graphql), the others the request itself. */
export function sentTo(server: ServerProcess, request: BenchRequest): { method: 'GET' | 'POST'; path: string; body?: string } {
  if (server.name !== 'postgraphile') return { method: request.method, path: request.path, body: request.body };
  if (!request.peer) throw new Error(`PostGraphile does not answer ${request.kind}`);
  return { method: 'POST', path: '/graphql', body: request.peer.body };
}

/** How often PostgreSQL's processes are listed again during a run, so a backend that comes or goes is counted. */
const POSTGRES_SAMPLE_MS = 500;

export async function measure(
  server: ServerProcess,
  key: string,
  request: BenchRequest,
  settings: RunSettings,
  /** PostgreSQL's processes (BenchDatabase.postgresPids); null or absent: PostgreSQL's share reads n/a. */
  postgres: () => number[] | null = () => null,
): Promise<RunResult> {
  const rss = sampleRss(server.pid);
  const sent = sentTo(server, request);
  // The CPU window opens right before the load starts and closes as soon as autocannon has stopped:
  // the settling second below, in which requests already taken still finish, is outside it, and so
  // are the requests of the run before. What is left over at either edge is at most `connections`
  // requests, against thousands in a run.
  const cpu = new CpuWindow(server.pid, postgres);
  const sampler = setInterval(() => cpu.sample(), POSTGRES_SAMPLE_MS);
  const running = autocannon({
    url: `${server.base}${sent.path}`,
    method: sent.method,
    headers: headersOf(key, sent),
    body: sent.body,
    connections: settings.connections,
    pipelining: 1,
    duration: settings.duration,
    ...(settings.rate ? { overallRate: settings.rate } : {}),
  });
  let result: Awaited<typeof running>;
  try {
    result = await running;
  } finally {
    clearInterval(sampler);
  }
  const used = cpu.stop();
  const rssMaxMb = rss.stop();
  // autocannon stops by dropping its connections; requests the server already took still run for a
  // while. Let them finish, so they load neither the next run nor the next statement count.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  if (server.exited) throw new Error(`${server.name} exited (${server.exited}) during the ${request.kind} run`);
  const requests = result.requests.total;
  const perRequest = (ms: number) => (requests > 0 ? ms / requests : 0);
  return {
    server: server.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    rssMaxMb,
    cpuMsPerRequest: perRequest(used.serverMs),
    systemMsPerRequest: perRequest(used.serverSystemMs),
    postgresMsPerRequest: used.postgresMs === null ? null : perRequest(used.postgresMs),
    ...(settings.rate ? { rate: settings.rate } : {}),
  };
}

/** SQL statements per request: `count` requests one after another between a reset and a read of pg_stat_statements. */
export async function statementsPerRequest(
  server: ServerProcess,
  key: string,
  request: BenchRequest,
  database: BenchDatabase,
  count = 20,
): Promise<number | null> {
  if (!database.statements) return null;
  await database.resetStatements();
  for (let i = 0; i < count; i++) {
    const sent = sentTo(server, request);
    const response = await fetch(`${server.base}${sent.path}`, { method: sent.method, headers: headersOf(key, sent), body: sent.body });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${server.name} answered ${response.status} to ${request.kind}`);
  }
  const statements = await database.statementCount();
  return statements === null ? null : statements / count;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
