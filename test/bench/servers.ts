// The servers under load, as child processes: the gateway's production entry (dist/src/main.js), the
// baseline (test/bench/baseline.ts under Node's own type stripping) and PostGraphile (test/bench/postgraphile.ts). Each is watched: a
// server that exits while the bench runs is an error, not a slow result.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/pg-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** /metrics needs a bearer token on the gateway's port; the bench reads the gateway's memory there. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';

export type ServerName = 'gateway' | 'baseline' | 'postgraphile';

export interface ServerProcess {
  name: ServerName;
  port: number;
  pid: number;
  base: string;
  /** Set when the process exited, with its code or signal. */
  exited: string | null;
  stop(): Promise<void>;
  /** SIGKILL, for a synchronous exit path. */
  kill(): void;
}

function watch(name: ServerProcess['name'], child: ChildProcess, port: number, log: string): ServerProcess {
  let stopping = false;
  const server: ServerProcess = {
    name,
    port,
    pid: child.pid!,
    base: `http://127.0.0.1:${port}`,
    exited: null,
    async stop() {
      if (server.exited) return;
      stopping = true;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
    kill() {
      if (!server.exited) child.kill('SIGKILL');
    },
  };
  child.once('exit', (code, signal) => {
    server.exited = `${code ?? signal}`;
    if (!stopping) console.error(`\n${name} (pid ${child.pid}) exited unexpectedly with ${code ?? signal}; its log: ${log}`);
  });
  return server;
}

/** Polls `path` (with `init`, GET by default) until it answers 200, or the process exits, or `timeoutMs` passes. */
async function waitReady(server: ServerProcess, path: string, timeoutMs: number, init?: RequestInit): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exited) throw new Error(`${server.name} exited (${server.exited}) before it was ready`);
    try {
      const response = await fetch(`${server.base}${path}`, init);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${server.name} was not ready within ${timeoutMs} ms`);
}

/**
 * The Node flags the gateway ships with (Dockerfile's CMD, `npm start`): the young generation capped at 2 × 32 MB, and the old
 * generation grown by at most 3× what the last full collection kept (V8 chooses up to 4× when collections are cheap, which they
 * are here: most of what the old generation holds under load is dead).
 */
export const SHIPPED_NODE_ARGS = '--max-semi-space-size=32 --heap-growing-percent=200';

/**
 * The gateway's Node flags in the bench: the shipped ones, or BENCH_GATEWAY_NODE_ARGS (e.g.
 * `--max-old-space-size=192` to compare memory settings; an empty value runs on V8's defaults).
 */
export function gatewayNodeArgs(): string[] {
  return (process.env.BENCH_GATEWAY_NODE_ARGS ?? SHIPPED_NODE_ARGS).split(' ').filter(Boolean);
}

/**
 * The gateway as production runs it (with its shipped Node flags): NODE_ENV=production, logs at info into a file. The rate limit is
 * off (the load is one key) and so is the runner (statement counts are the requests' own).
 */
export async function startGateway(
  databaseUrl: string | null,
  bootstrapKey: string,
  log: string,
  /** The voice section's: a port chosen beforehand (PUBLIC_URL names it), and more environment (undefined removes a variable). */
  extra: { port?: number; env?: Record<string, string | undefined>; root?: string } = {},
): Promise<ServerProcess> {
  const port = extra.port ?? (await freePort());
  const out = openSync(log, 'a');
  const nodeArgs = gatewayNodeArgs();
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'production',
    // null: the embedded PGlite (under DATA_DIR).
    DATABASE_URL: databaseUrl ?? undefined,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    BOOTSTRAP_API_KEY: bootstrapKey,
    RATE_LIMIT_PER_MINUTE: '0',
    RUNNER_ENABLED: 'false',
    METRICS_TOKEN: BENCH_METRICS_TOKEN,
    ...extra.env,
  };
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name];
  // `root`: another checkout's build, to compare two versions of the gateway side by side on the same data.
  const root = extra.root ?? ROOT;
  const child = spawn(process.execPath, [...nodeArgs, `${root}dist/src/main.js`], { cwd: root, env, stdio: ['ignore', out, out] });
  closeSync(out);
  const server = watch('gateway', child, port, log);
  await waitReady(server, '/readyz', 60_000);
  return server;
}

export async function startBaselineProcess(databaseUrl: string, log: string): Promise<ServerProcess> {
  const port = await freePort();
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, [`${ROOT}test/bench/baseline.ts`], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', DB_POOL_MAX: process.env.DB_POOL_MAX ?? '10' },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const server = watch('baseline', child, port, log);
  await waitReady(server, '/healthz', 30_000);
  return server;
}

/** PostGraphile v5 in production mode, with the gateway's pool size; ready once its schema is introspected. */
export async function startPostGraphileProcess(databaseUrl: string, log: string): Promise<ServerProcess> {
  const port = await freePort();
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, [`${ROOT}test/bench/postgraphile.ts`], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DB_POOL_MAX: process.env.DB_POOL_MAX ?? '10',
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const server = watch('postgraphile', child, port, log);
  // grafserv answers only /graphql, and only POST
  const typename = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' };
  await waitReady(server, '/graphql', 60_000, typename);
  return server;
}

/** Resident set size in MB from /proc (Linux); null elsewhere or once the process is gone. */
export function rssMb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `intervalMs` until stopped; answers the largest sample. */
export function sampleRss(pid: number, intervalMs = 200): { stop(): number | null } {
  let max: number | null = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now !== null) max = Math.max(max ?? 0, now);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const now = rssMb(pid);
      if (now !== null) max = Math.max(max ?? 0, now);
      return max;
    },
  };
}
