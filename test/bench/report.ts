// The bench's outcome: medians per request kind (CPU per request first, then throughput and latency),
// the ratios to the baseline and to PostGraphile and the issue's targets,
// as a Markdown table (stdout, for docs/performance.md) and as raw numbers (test/bench/results/latest.json).
import { cpus, release, totalmem } from 'node:os';
import type { BenchRequest } from './kinds.js';
import { median, type RunResult } from './measure.js';
import { gatewayNodeArgs } from './servers.js';

/** The issue's targets besides the per-kind throughput share. */
export const FIXED_RATE_P99_FACTOR = 2;
export const RSS_LIMIT_MB = 250;
/** The gateway's share of PostGraphile's throughput the issue asks for on the nested GraphQL queries. */
export const PEER_TARGET = 1.0;
/** The gateway's CPU per request may be at most this many times PostGraphile's (the kinds it answers), and the baseline's (REST lists). */
export const CPU_PEER_FACTOR = 1;
export const CPU_BASELINE_FACTOR = 2;
/** Idle RSS of the gateway on PostgreSQL (after start and a few requests) the issue asks for. */
export const IDLE_RSS_LIMIT_MB = 200;
/** The share of a fixed rate a server must reach for its latencies at that rate to count. */
const KEPT_RATE = 0.95;

export interface KindResult {
  request: BenchRequest;
  rounds: { gateway: RunResult; baseline: RunResult; postgraphile: RunResult | null }[];
  fixed: { rate: number; gateway: RunResult; baseline: RunResult };
  /** SQL statements per request, from pg_stat_statements; null = n/a. */
  statements: { gateway: number | null; baseline: number | null; postgraphile: number | null };
}

/** Median CPU milliseconds per request of one server: its own process's, and PostgreSQL's while it was measured. */
export interface CpuPerRequest {
  server: number;
  postgres: number | null;
}

export interface Summary {
  kind: string;
  /** The headline: CPU per request of each server (medians of the rounds), and the gateway's against the targets. */
  cpu: {
    gateway: CpuPerRequest;
    baseline: CpuPerRequest;
    postgraphile: CpuPerRequest | null;
    /** gateway / PostGraphile (server processes, median of the rounds' ratios); the target (≤ 1) where PostGraphile answers the kind. */
    peerRatio: number | null;
    peerMet: boolean | null;
    /** gateway / baseline (server processes, median of the rounds' ratios); the target (≤ 2) on the REST lists. */
    baselineRatio: number;
    baselineMet: boolean | null;
  };
  label: string;
  gateway: { rps: number; p50: number; p99: number };
  baseline: { rps: number; p50: number; p99: number };
  ratio: number;
  /** PostGraphile's medians and the gateway's share of them; null where it does not answer the kind. */
  postgraphile: { rps: number; p50: number; p99: number } | null;
  peerRatio: number | null;
  /** ≥ 1.0× PostGraphile on the nested GraphQL queries (issue #14); null where there is no such target. */
  peerMet: boolean | null;
  target: number | null;
  throughputMet: boolean | null;
  fixed: { rate: number; gatewayRps: number; baselineRps: number; gatewayP99: number; baselineP99: number; ratio: number; met: boolean };
  non2xx: { gateway: number; baseline: number };
  errors: { gateway: number; baseline: number };
  statementsPerRequest: { gateway: number | null; baseline: number | null; postgraphile: number | null };
  rssMaxMb: { gateway: number | null; baseline: number | null; postgraphile: number | null };
}

export interface Machine {
  /** 1-minute load average when the bench started: anything else running on the machine skews both servers. */
  loadAverage: number;
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  postgres: string;
}

export function machine(postgres: string, loadAverage: number): Machine {
  const list = cpus();
  return {
    loadAverage: Math.round(loadAverage * 100) / 100,
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${process.platform} ${release()}`,
    node: process.version,
    postgres,
  };
}

const all = (result: KindResult, server: 'gateway' | 'baseline') => [...result.rounds.map((round) => round[server]), result.fixed[server]];

function maxOf(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : Math.max(...known);
}

export function summarize(result: KindResult): Summary {
  const medians = (server: 'gateway' | 'baseline') => {
    const runs = result.rounds.map((round) => round[server]);
    return { rps: median(runs.map((run) => run.rps)), p50: median(runs.map((run) => run.p50)), p99: median(runs.map((run) => run.p99)) };
  };
  const gateway = medians('gateway');
  const baseline = medians('baseline');
  const ratio = baseline.rps > 0 ? gateway.rps / baseline.rps : 0;
  const peerRuns = result.rounds.map((round) => round.postgraphile).filter((run): run is RunResult => run !== null);
  const postgraphile =
    peerRuns.length > 0
      ? { rps: median(peerRuns.map((run) => run.rps)), p50: median(peerRuns.map((run) => run.p50)), p99: median(peerRuns.map((run) => run.p99)) }
      : null;
  const peerRatio = postgraphile && postgraphile.rps > 0 ? gateway.rps / postgraphile.rps : null;
  const cpuOf = (runs: RunResult[]): CpuPerRequest => {
    const postgres = runs.map((run) => run.postgresMsPerRequest).filter((value): value is number => value !== null);
    return { server: median(runs.map((run) => run.cpuMsPerRequest)), postgres: postgres.length === runs.length ? median(postgres) : null };
  };
  const cpu = {
    gateway: cpuOf(result.rounds.map((round) => round.gateway)),
    baseline: cpuOf(result.rounds.map((round) => round.baseline)),
    postgraphile: peerRuns.length > 0 ? cpuOf(peerRuns) : null,
  };
  // Ratios per round, then their median: the servers of one round ran seconds apart, so a round's
  // ratio is less swayed by the rest of the machine (which slows every instruction on a shared VM)
  // than a ratio of medians taken from different rounds.
  const pairedRatio = (other: 'baseline' | 'postgraphile') => {
    const ratios = result.rounds.flatMap((round) => {
      const theirs = round[other];
      return theirs && theirs.cpuMsPerRequest > 0 ? [round.gateway.cpuMsPerRequest / theirs.cpuMsPerRequest] : [];
    });
    return ratios.length > 0 ? median(ratios) : null;
  };
  const cpuPeerRatio = pairedRatio('postgraphile');
  const cpuBaselineRatio = pairedRatio('baseline') ?? Infinity;
  // The REST lists: a GET under /api (the agents page, a program's executions).
  const restList = result.request.method === 'GET' && result.request.path.startsWith('/api/');
  const nested = result.request.kind.startsWith('graphql-');
  const fixedRatio = result.fixed.baseline.p99 > 0 ? result.fixed.gateway.p99 / result.fixed.baseline.p99 : Infinity;
  const sum = (server: 'gateway' | 'baseline', pick: (run: RunResult) => number) => all(result, server).reduce((total, run) => total + pick(run), 0);
  return {
    kind: result.request.kind,
    label: result.request.label,
    cpu: {
      ...cpu,
      peerRatio: cpuPeerRatio,
      peerMet: cpuPeerRatio === null ? null : cpuPeerRatio <= CPU_PEER_FACTOR,
      baselineRatio: cpuBaselineRatio,
      baselineMet: restList ? cpuBaselineRatio <= CPU_BASELINE_FACTOR : null,
    },
    gateway,
    baseline,
    ratio,
    postgraphile,
    peerRatio,
    peerMet: peerRatio === null || !nested ? null : peerRatio >= PEER_TARGET,
    target: result.request.target,
    throughputMet: result.request.target === null ? null : ratio >= result.request.target,
    fixed: {
      rate: result.fixed.rate,
      gatewayRps: result.fixed.gateway.rps,
      baselineRps: result.fixed.baseline.rps,
      gatewayP99: result.fixed.gateway.p99,
      baselineP99: result.fixed.baseline.p99,
      ratio: fixedRatio,
      // Latencies of a server that cannot keep the rate leave out the time requests wait to be sent: not a pass.
      met: fixedRatio <= FIXED_RATE_P99_FACTOR && result.fixed.gateway.rps >= result.fixed.rate * KEPT_RATE,
    },
    non2xx: { gateway: sum('gateway', (run) => run.non2xx), baseline: sum('baseline', (run) => run.non2xx) },
    errors: { gateway: sum('gateway', (run) => run.errors), baseline: sum('baseline', (run) => run.errors) },
    statementsPerRequest: result.statements,
    rssMaxMb: {
      gateway: maxOf(all(result, 'gateway').map((run) => run.rssMaxMb)),
      baseline: maxOf(all(result, 'baseline').map((run) => run.rssMaxMb)),
      postgraphile: maxOf(peerRuns.map((run) => run.rssMaxMb)),
    },
  };
}

const fixed = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
// autocannon's latencies are whole milliseconds: 0 means under one.
const ms = (value: number) => (value === 0 ? '<1' : value < 10 ? fixed(value, 1) : fixed(value));
const orNa = (value: number | null, digits = 1) => (value === null ? 'n/a' : fixed(value, digits));
const mark = (met: boolean) => (met ? '✅' : '❌');
/** CPU milliseconds per request: two decimals, since the fastest servers spend a fraction of one. */
const cpuMs = (value: number | null) => (value === null ? 'n/a' : fixed(value, 2));
/** A gateway that cannot keep the fixed rate queues, and its p99 says so; the table shows how far it got. */
const behind = (s: Summary) => (s.fixed.gatewayRps < s.fixed.rate * KEPT_RATE ? `, gw only ${fixed(s.fixed.gatewayRps)}` : '');

export interface ReportContext {
  machine: Machine;
  /** RSS of each server after its start and the equivalence checks' few requests, before any load. */
  idleRssMb: { gateway: number | null; baseline: number | null; postgraphile: number | null };
  settings: { duration: number; rounds: number; connections: number; warmup: number };
  database: string;
}

export function markdown(summaries: Summary[], context: ReportContext): string {
  const lines = [
    '| request | CPU ms/request gw / PG / base | gw CPU / PostGraphile (≤ 1) | gw CPU / baseline (≤ 2 on REST lists) | PostgreSQL CPU ms/request gw / PG / base | gateway req/s | PostGraphile req/s | baseline req/s | gw / PostGraphile (target) | gw / baseline (target) | p50 ms gw / PG / base | p99 ms gw / PG / base | p99 ms at ½ baseline max: gw / base (≤ 2×) | non-2xx gw / base | SQL/request gw / PG / base | RSS max MB gw / PG / base |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of summaries) {
    const target = s.target === null ? '' : ` (≥ ${s.target} ${mark(s.throughputMet!)})`;
    const errors = s.errors.gateway + s.errors.baseline > 0 ? ` (+${s.errors.gateway} / ${s.errors.baseline} errors)` : '';
    const pg = s.postgraphile;
    const peer = s.peerRatio === null ? 'n/a' : `${fixed(s.peerRatio, 2)}×${s.peerMet === null ? '' : ` (≥ ${PEER_TARGET} ${mark(s.peerMet)})`}`;
    const c = s.cpu;
    const cpuPeer = c.peerRatio === null ? 'n/a' : `${fixed(c.peerRatio, 2)}× ${mark(c.peerMet!)}`;
    const cpuBase = `${fixed(c.baselineRatio, 2)}×${c.baselineMet === null ? '' : ` ${mark(c.baselineMet)}`}`;
    lines.push(
      `| ${s.label} | ${cpuMs(c.gateway.server)} / ${c.postgraphile ? cpuMs(c.postgraphile.server) : '–'} / ${cpuMs(c.baseline.server)} | ${cpuPeer} | ${cpuBase} ` +
        `| ${cpuMs(c.gateway.postgres)} / ${c.postgraphile ? cpuMs(c.postgraphile.postgres) : '–'} / ${cpuMs(c.baseline.postgres)} ` +
        `| ${fixed(s.gateway.rps)} | ${pg ? fixed(pg.rps) : 'n/a'} | ${fixed(s.baseline.rps)} | ${peer} | ${fixed(s.ratio, 2)}×${target} ` +
        `| ${ms(s.gateway.p50)} / ${pg ? ms(pg.p50) : '–'} / ${ms(s.baseline.p50)} | ${ms(s.gateway.p99)} / ${pg ? ms(pg.p99) : '–'} / ${ms(s.baseline.p99)} ` +
        `| ${ms(s.fixed.gatewayP99)} / ${ms(s.fixed.baselineP99)} at ${fixed(s.fixed.rate)} req/s${behind(s)} (${fixed(s.fixed.ratio, 1)}× ${mark(s.fixed.met)}) ` +
        `| ${s.non2xx.gateway} / ${s.non2xx.baseline}${errors} ` +
        `| ${orNa(s.statementsPerRequest.gateway)} / ${pg ? orNa(s.statementsPerRequest.postgraphile) : '–'} / ${orNa(s.statementsPerRequest.baseline)} ` +
        `| ${orNa(s.rssMaxMb.gateway, 0)} / ${pg ? orNa(s.rssMaxMb.postgraphile, 0) : '–'} / ${orNa(s.rssMaxMb.baseline, 0)} |`,
    );
  }
  const rss = maxOf(summaries.map((s) => s.rssMaxMb.gateway));
  const peerRss = maxOf(summaries.map((s) => s.rssMaxMb.postgraphile));
  const peerTargets = summaries.filter((s) => s.peerMet !== null);
  const m = context.machine;
  const { duration, rounds, connections, warmup } = context.settings;
  const cpuPeer = summaries.filter((s) => s.cpu.peerMet !== null);
  const cpuBaseline = summaries.filter((s) => s.cpu.baselineMet !== null);
  const idle = context.idleRssMb;
  lines.push(
    '',
    `CPU targets (server process, median of the rounds' ratios): gateway ≤ ${CPU_PEER_FACTOR}× PostGraphile's: ` +
      `${cpuPeer.length === 0 ? 'n/a' : cpuPeer.map((s) => `${s.kind} ${s.cpu.peerMet ? 'pass' : 'MISS'}`).join(', ')}; ` +
      `≤ ${CPU_BASELINE_FACTOR}× the baseline's on REST lists: ` +
      `${cpuBaseline.length === 0 ? 'n/a' : cpuBaseline.map((s) => `${s.kind} ${s.cpu.baselineMet ? 'pass' : 'MISS'}`).join(', ')}.`,
    '',
    `Idle RSS (after start and the equivalence checks' requests, before any load): gateway ${orNa(idle.gateway, 0)} MB ` +
      `(≤ ${IDLE_RSS_LIMIT_MB} MB: ${idle.gateway === null ? 'n/a' : idle.gateway <= IDLE_RSS_LIMIT_MB ? 'pass' : 'MISS'}), ` +
      `PostGraphile ${orNa(idle.postgraphile, 0)} MB, baseline ${orNa(idle.baseline, 0)} MB.`,
    '',
    `Throughput targets: ${summaries
      .filter((s) => s.throughputMet !== null)
      .map((s) => `${s.kind} ${s.throughputMet ? 'pass' : 'MISS'}`)
      .join(', ')}; ` +
      `fixed-rate p99 ≤ ${FIXED_RATE_P99_FACTOR}× baseline: ${summaries.map((s) => `${s.kind} ${s.fixed.met ? 'pass' : 'MISS'}`).join(', ')}; ` +
      `gateway RSS under load ≤ ${RSS_LIMIT_MB} MB: ${rss === null ? 'n/a' : `${fixed(rss)} MB ${rss <= RSS_LIMIT_MB ? 'pass' : 'MISS'}`}; ` +
      `≥ ${PEER_TARGET}× PostGraphile: ${peerTargets.length === 0 ? 'n/a' : peerTargets.map((s) => `${s.kind} ${s.peerMet ? 'pass' : 'MISS'}`).join(', ')}; ` +
      `gateway RSS ≤ PostGraphile's: ${rss === null || peerRss === null ? 'n/a' : `${fixed(rss)} / ${fixed(peerRss)} MB ${rss <= peerRss ? 'pass' : 'MISS'}`}.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${fixed(m.memoryGb, 1)} GB RAM, ${m.os}, Node ${m.node}, PostgreSQL ${m.postgres} (${context.database}); ` +
      `load generator, the servers and PostgreSQL share the machine (load average ${m.loadAverage} when the bench started).`,
    "CPU per request: the server process's user + system time (/proc/<pid>/stat, all its threads) over exactly each measured run, " +
      "divided by the requests it answered in that run; PostgreSQL's beside it, the same over its processes (every child of the throwaway " +
      "cluster's postmaster, or the backends of the bench database on DATABASE_URL's server; n/a when they are not visible from here). " +
      'It depends much less than req/s on how busy the machine is, not at all: on a shared VM other work slows each instruction, so the ' +
      'ratios are taken per round (the servers a few seconds apart) and their median shown.',
    `Method: medians of ${rounds} round${rounds === 1 ? '' : 's'} of ${duration} s per server and request, interleaved gateway/baseline/PostGraphile, ${connections} connections, ` +
      `pipelining 1, after ${warmup} s of warm-up each; then ${duration} s at a fixed rate of half the baseline's median max ` +
      `(a pass needs the gateway to keep ${KEPT_RATE * 100} % of that rate). ` +
      `Gateway: node ${[...gatewayNodeArgs(), 'dist/src/main.js'].join(' ')} restarted after seeding, ` +
      'NODE_ENV=production, log level info to a file, rate limit and campaign runner off ' +
      "(SQL/request counts only the requests' statements, from pg_stat_statements, BEGIN/COMMIT included). " +
      'Baseline: node:http + pg, one prepared statement per request (authentication included), same pool size. ' +
      'PostGraphile 5.1.5: amber preset, grafserv on node:http, NODE_ENV=production, same pool size, no authentication (queries scoped by a condition on organizationId). ' +
      "Each server's answers were checked before the load: the baseline's to be the same JSON, PostGraphile's mapped to the gateway's shape to be the same data.",
  );
  return lines.join('\n');
}
