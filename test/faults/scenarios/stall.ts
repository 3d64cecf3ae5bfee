// What the stall scenarios (response-size bomb, search storm) watch while the load runs: /healthz
// latency, another organization's GET /api/users/me, and the gateway's resident memory.
import { execFileSync, spawn } from 'node:child_process';
import type { Report } from '../report.js';
import { API_KEY, type GatewayProcess } from '../server.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** Another organization and its key, made with the operator CLI (PostgreSQL lets it run beside the server). */
export function createOrganization(databaseUrl: string, name: string): { organizationId: string; apiKey: string } {
  const out = execFileSync(process.execPath, ['dist/src/cli.js', 'org:create', '--name', name, '--email', `owner@${name.toLowerCase()}.test`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', JWT_SECRET: 'faults-jwt-secret-that-is-long-enough-0123456789' },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { organizationId: string; apiKey: string };
}

/** Sends one JSON request with the faults key (or another); answers status, bytes and time. */
export async function call(url: string, init: { method?: string; body?: unknown; apiKey?: string } = {}, timeoutMs = 30_000) {
  const sentAt = Date.now();
  try {
    const res = await fetch(url, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { 'x-api-key': init.apiKey ?? API_KEY, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let code: string | undefined;
    if (res.status >= 400 || text.startsWith('{"errors"')) {
      try {
        const parsed = JSON.parse(text) as { code?: string; errors?: { extensions?: { code?: string } }[] };
        code = parsed.code ?? parsed.errors?.[0]?.extensions?.code;
      } catch {
        code = 'NOT_JSON';
      }
    }
    return { status: res.status, code, bytes: text.length, ms: Date.now() - sentAt, text };
  } catch (error) {
    return { status: undefined, code: (error as Error).name, bytes: 0, ms: Date.now() - sentAt, text: '' };
  }
}

function rssMiB(pid: number): number {
  try {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Percentile of sorted numbers. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

// The probe runs in a process of its own: the storm's clients parse multi-MB answers, and a probe
// sharing their event loop would measure the script's own stalls, not the gateway's.
const PROBE = `
const [url, key, everyMs, meEvery] = process.argv.slice(1);
let running = true;
process.stdin.on('end', () => { running = false; });
process.stdin.resume();
const timed = async (path, headers) => {
  const sentAt = performance.now();
  try {
    const res = await fetch(url + path, { headers, signal: AbortSignal.timeout(10000) });
    await res.arrayBuffer();
    return { ms: Math.round(performance.now() - sentAt), status: res.status };
  } catch { return { ms: Math.round(performance.now() - sentAt) }; }
};
// The first fetch of a process loads its HTTP client and opens a connection (50–70 ms on an idle
// machine): done once, unrecorded, before the probe says it is ready.
await timed('/healthz', {});
await timed('/api/users/me', { 'x-api-key': key });
process.stdout.write(JSON.stringify({ ready: true }) + '\\n');
for (let i = 0; running; i++) {
  const health = await timed('/healthz', {});
  const me = i % Number(meEvery) === 0 ? await timed('/api/users/me', { 'x-api-key': key }) : undefined;
  process.stdout.write(JSON.stringify({ health, me }) + '\\n');
  await new Promise((resolve) => setTimeout(resolve, Number(everyMs)));
}
`;

/**
 * Every `everyMs`, from a separate process: GET /healthz and (every `meEvery`th time, by default the
 * fourth) the other organization's GET /api/users/me; and the gateway's RSS. One probe at a time, so a slow answer
 * is measured, not queued behind another probe. `ready` settles once the probe's own first fetch
 * (its client's start-up, not the gateway's time) is behind it: start the load after it.
 */
export function watchResponsiveness(gateway: GatewayProcess, otherKey: string, everyMs = 50, meEvery = 4) {
  const health: number[] = [];
  const me: { ms: number; status?: number }[] = [];
  const rss: number[] = [rssMiB(gateway.child.pid!)];
  const probe = spawn(process.execPath, ['--input-type=module', '-e', PROBE, gateway.url, otherKey, String(everyMs), String(meEvery)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let buffered = '';
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  probe.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const sample = JSON.parse(line) as { ready?: true; health: { ms: number; status?: number }; me?: { ms: number; status?: number } };
      if (sample.ready) {
        markReady();
        continue;
      }
      health.push(sample.health.status === 200 ? sample.health.ms : Number.POSITIVE_INFINITY);
      if (sample.me) me.push(sample.me);
    }
  });
  // A probe that died before it was ready must not hold the scenario up: stop() reports what it saw.
  const exited = new Promise((resolve) => probe.once('exit', resolve)).finally(() => markReady());
  const sampler = setInterval(() => rss.push(rssMiB(gateway.child.pid!)), 250);
  return {
    ready,
    async stop() {
      clearInterval(sampler);
      probe.stdin.end();
      await exited;
      rss.push(rssMiB(gateway.child.pid!));
      const healthSorted = [...health].sort((a, b) => a - b);
      const meSorted = me.map((m) => m.ms).sort((a, b) => a - b);
      return {
        health: { count: health.length, p50: percentile(healthSorted, 50), p99: percentile(healthSorted, 99), max: healthSorted.at(-1) ?? Number.NaN },
        me: { count: me.length, bad: me.filter((m) => m.status !== 200).length, p99: percentile(meSorted, 99), max: meSorted.at(-1) ?? Number.NaN },
        rss: { start: rss[0]!, peak: Math.max(...rss.filter(Number.isFinite)), end: rss.at(-1)! },
      };
    },
  };
}

export type Responsiveness = Awaited<ReturnType<ReturnType<typeof watchResponsiveness>['stop']>>;

/**
 * The checks a stall scenario makes of what watchResponsiveness saw under its load (`seen`) against the
 * same load without the fault (`baseline`, measured first in the same run): /healthz p99 under
 * `healthP99Ms` or under `baselineFactor` times its p99 without the fault; the other organization's
 * requests all 200 within `meMaxMs`; RSS growth from before the baseline under `rssGrowthMiB`.
 */
export function checkResponsiveness(
  report: Report,
  seen: Responsiveness,
  baseline: Responsiveness,
  limits: { fault: string; healthP99Ms: number; baselineFactor: number; meMaxMs: number; rssGrowthMiB: number },
): void {
  report.check(
    `/healthz p99 under ${limits.healthP99Ms} ms, or under ${limits.baselineFactor} × its p99 without the ${limits.fault}`,
    seen.health.p99 < limits.healthP99Ms || seen.health.p99 < limits.baselineFactor * baseline.health.p99,
    `p99 ${seen.health.p99} ms, max ${seen.health.max} ms over ${seen.health.count} probes; without the ${limits.fault} p99 ${baseline.health.p99} ms`,
  );
  report.check(
    `another organization's GET /api/users/me answers 200 within ${limits.meMaxMs} ms`,
    seen.me.count > 0 && seen.me.bad === 0 && seen.me.max < limits.meMaxMs,
    `${seen.me.count} calls, ${seen.me.bad} not 200, p99 ${seen.me.p99} ms, max ${seen.me.max} ms`,
  );
  const rssStart = baseline.rss.start;
  const rssPeak = Math.max(seen.rss.peak, baseline.rss.peak);
  report.check(
    `RSS grows less than ${limits.rssGrowthMiB} MiB`,
    rssPeak - rssStart < limits.rssGrowthMiB,
    `${rssStart.toFixed(0)} → peak ${rssPeak.toFixed(0)} → ${seen.rss.end.toFixed(0)} MiB`,
  );
}

/** `workers` loops, each calling `step(n)` until `durationMs` has passed; answers every result. */
export async function storm<T>(workers: number, durationMs: number, step: (n: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  const until = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let n = worker; Date.now() < until; n += workers) results.push(await step(n));
    }),
  );
  return results;
}

const WORDS = (
  'opening hours refund policy delivery parcel warehouse invoice payment card account password reset ' +
  'appointment doctor clinic insurance claim billing address phone number email support ticket agent ' +
  'order return exchange size colour stock price discount voucher loyalty points store branch manager'
).split(' ');

/** Deterministic prose of about `chars` characters, in paragraphs, from a small vocabulary (so questions match many passages). */
export function prose(chars: number, seed: number): string {
  let state = (seed * 2654435761) >>> 0;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0) % WORDS.length;
  const parts: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < chars) {
    const words = Array.from({ length: 8 + (next() % 8) }, () => WORDS[next()]!);
    const text = words.join(' ') + '.' + (++sentence % 6 === 0 ? '\n\n' : ' ');
    parts.push(text);
    length += text.length;
  }
  return parts.join('').slice(0, chars);
}
