// `npm run bench -- --only=scale`: a gateway over an organization of a million contacts (--scale-rows),
// seeded in SQL, on PostgreSQL and on the embedded PGlite, and the measures of measures.ts run against
// each; one table. A measurement: a missed target is reported, not failed.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { withDatabase } from '../../support/pg-cluster.js';
import { ApiClient } from '../client.js';
import type { BenchDatabase } from '../database.js';
import { startGateway, type ServerProcess } from '../servers.js';
import { SCALE_MEASURES } from './measures.js';
import { seedScale } from './seed.js';
import type { ScaleDatabase, ScaleRow } from './types.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RESULTS = fileURLToPath(new URL('../results/', import.meta.url));
const SCALE_DATABASE = 'gateway_bench_scale';

export interface ScaleOptions {
  rows: number;
  requests: number;
  importRows: number;
  databases: ScaleDatabase[];
}

let running: ServerProcess | undefined;
/** For the bench's exit path: no gateway left behind. */
export function killScaleBench(): void {
  running?.kill();
}

/** `org:create` through the built CLI on the database; its key and id. */
function createOrganization(env: Record<string, string>): { apiKey: string; organizationId: string } {
  const result = spawnSync(process.execPath, [`${ROOT}dist/src/cli.js`, 'org:create', '--name', 'Scale', '--email', 'owner@scale.bench.test'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`org:create failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as { apiKey: string; organizationId: string };
}

async function onDatabase(which: ScaleDatabase, bench: BenchDatabase | null, options: ScaleOptions, log: (line: string) => void): Promise<ScaleRow[]> {
  let databaseUrl: string | undefined;
  let dataDir: string | undefined;
  let admin: pg.Client | undefined;
  if (which === 'postgresql') {
    if (!bench) throw new Error('the scale section on PostgreSQL needs the bench database');
    admin = new pg.Client({ connectionString: bench.url });
    await admin.connect();
    await admin.query(`drop database if exists ${SCALE_DATABASE} with (force)`);
    await admin.query(`create database ${SCALE_DATABASE}`);
    databaseUrl = withDatabase(bench.url, SCALE_DATABASE);
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-scale-'));
  }
  try {
    const env: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir! };
    if (!databaseUrl) delete process.env.DATABASE_URL;
    const org = createOrganization(env);
    log(`  ${which}: seeding ${options.rows.toLocaleString('en')} contacts in SQL…`);
    const seeded = await seedScale({ databaseUrl, dataDir: dataDir ?? 'memory://' }, org.organizationId, options.rows, log);
    log(`  ${which}: seeded in ${seeded.seconds.toFixed(0)} s`);
    const gatewayLog = `${RESULTS}scale-${which}-gateway.log`;
    writeFileSync(gatewayLog, '');
    // The snapshot of a million contacts runs longer than a request's default deadline: the bench lifts it to measure it.
    running = await startGateway(databaseUrl ?? null, `bench_${randomBytes(24).toString('hex')}`, gatewayLog, {
      env: { ...(dataDir ? { DATA_DIR: dataDir } : {}), REQUEST_TIMEOUT_MS: '3600000', DB_STATEMENT_TIMEOUT_MS: '0' },
    });
    const api = new ApiClient(running.base, org.apiKey);
    const segment = await api.post<{ id: string; contactCount: number }>('/api/audience', {
      name: 'Gold in Europe',
      filter: {
        all: [
          { field: 'attributes.tier', op: 'eq', value: 'gold' },
          { field: 'timeZone', op: 'prefix', value: 'Europe/' },
        ],
      },
    });
    log(`  ${which}: segment of ${segment.contactCount.toLocaleString('en')} contacts`);
    const context = {
      database: which,
      rows: options.rows,
      api,
      organizationId: org.organizationId,
      audienceId: seeded.audienceId,
      segmentId: segment.id,
      requests: options.requests,
      importRows: options.importRows,
      pid: running.pid,
      log,
    };
    const rows: ScaleRow[] = [];
    for (const measure of SCALE_MEASURES) {
      log(`  ${which}: ${measure.name}`);
      rows.push(...(await measure.run(context)));
    }
    return rows;
  } finally {
    await running?.stop();
    running = undefined;
    if (admin) {
      await admin.query(`drop database if exists ${SCALE_DATABASE} with (force)`).catch(() => undefined);
      await admin.end();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Runs every measure on each database; the rows, with the targets judged (PGlite against PostgreSQL's row of the same measure). */
export async function scaleBench(bench: BenchDatabase | null, options: ScaleOptions, log: (line: string) => void): Promise<ScaleRow[]> {
  const saved = process.env.DATABASE_URL;
  const rows: ScaleRow[] = [];
  try {
    for (const which of options.databases) rows.push(...(await onDatabase(which, bench, options, log)));
  } finally {
    if (saved !== undefined) process.env.DATABASE_URL = saved;
  }
  for (const row of rows) {
    if (row.target === null || row.p99 === null) continue;
    if (row.database === 'postgresql') row.met = row.p50 <= 50 && row.p99 <= 50;
    else {
      const pgRow = rows.find((other) => other.database === 'postgresql' && other.measure === row.measure);
      row.met = pgRow && pgRow.p99 !== null ? row.p50 <= 5 * pgRow.p50 && row.p99 <= 5 * pgRow.p99 : null;
    }
  }
  writeFileSync(`${RESULTS}scale.json`, `${JSON.stringify({ finishedAt: new Date().toISOString(), options, rows }, null, 2)}\n`);
  return rows;
}

const ms = (value: number) => (value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : value >= 100 ? value.toFixed(0) : value.toFixed(1));

/** The table: one row per measure, PostgreSQL and PGlite side by side. */
export function scaleMarkdown(rows: ScaleRow[], options: ScaleOptions): string {
  const measures = [...new Set(rows.map((row) => row.measure))];
  const cell = (row: ScaleRow | undefined) =>
    row
      ? `${ms(row.p50)}${row.p99 === null ? '' : ` / ${ms(row.p99)}`}${row.note ? ` (${row.note})` : ''}${row.met === null ? '' : row.met ? ' ✅' : ' ❌'}`
      : 'n/a';
  const lines = [
    `Scale: ${options.rows.toLocaleString('en')} contacts, ${options.requests} sequential requests per latency (p50 / p99 ms; a duration alone where one request is measured)`,
    '',
    '| measure | PostgreSQL | PGlite | PGlite / PostgreSQL (p50) | target |',
    '|---|---:|---:|---:|---|',
  ];
  for (const measure of measures) {
    const postgres = rows.find((row) => row.measure === measure && row.database === 'postgresql');
    const pglite = rows.find((row) => row.measure === measure && row.database === 'pglite');
    const ratio = postgres && pglite ? `${(pglite.p50 / postgres.p50).toFixed(1)}×` : 'n/a';
    lines.push(`| ${measure} | ${cell(postgres)} | ${cell(pglite)} | ${ratio} | ${(postgres ?? pglite)?.target ?? '–'} |`);
  }
  return lines.join('\n');
}
