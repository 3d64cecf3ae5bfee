// Where the bench's data lives: a throwaway cluster with pg_stat_statements preloaded, or the server of
// DATABASE_URL, in which the bench (re)creates its own database and drops it at the end. Statement
// counts come from pg_stat_statements, read and reset from the maintenance database so that neither
// the reset nor the reads are counted against the bench database.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { parentPid, postgresChildren } from './cpu.js';
import { startPgCluster, withDatabase, type PgCluster } from '../support/pg-cluster.js';

export const BENCH_DATABASE = 'gateway_bench';

export interface BenchDatabase {
  /** postgres://…/gateway_bench */
  url: string;
  /** Whether pg_stat_statements can be read (preloaded and the extension created). */
  statements: boolean;
  serverVersion: string;
  /** Sum of `calls` of the bench database since the last reset; null without pg_stat_statements. */
  statementCount(): Promise<number | null>;
  resetStatements(): Promise<void>;
  /**
   * PostgreSQL's processes whose CPU counts against the requests (test/bench/cpu.ts): every child of
   * the throwaway cluster's postmaster, or on DATABASE_URL's server the backends of gateway_bench;
   * null when the server's processes are not visible from here (another machine or container).
   */
  postgresPids(): number[] | null;
  /** VACUUM ANALYZE after seeding, so autovacuum does not change plans in the middle of the runs. */
  analyze(): Promise<void>;
  /** Drops the database (DATABASE_URL) or destroys the cluster. */
  close(): Promise<void>;
  /** Synchronous last resort on process exit: the cluster goes, a DATABASE_URL database stays. */
  destroySync(): void;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {
    // the server went away: the next query reports it
  });
  await client.connect();
  return client;
}

/**
 * The postmaster of the server a backend (`pg_backend_pid()`) belongs to, when that backend is a
 * process of this machine: its title must be PostgreSQL's ("postgres: …"), since a server in a
 * container numbers its processes in its own namespace, where the same number is another process here.
 */
function postmasterOf(backend: number): number | null {
  try {
    if (!readFileSync(`/proc/${backend}/cmdline`, 'utf8').startsWith('postgres:')) return null;
  } catch {
    return null;
  }
  return parentPid(backend);
}

/** `keep`: leave gateway_bench in DATABASE_URL's server at the end, to look at the seeded data (BENCH_KEEP_DATABASE=1). */
export async function openBenchDatabase(databaseUrl: string | undefined, keep = false): Promise<BenchDatabase> {
  let cluster: PgCluster | null = null;
  if (!databaseUrl) cluster = await startPgCluster({ settings: { shared_preload_libraries: 'pg_stat_statements' } });
  const adminUrl = cluster ? cluster.url : databaseUrl!;
  const admin = await connect(adminUrl);
  try {
    await admin.query(`drop database if exists ${BENCH_DATABASE} with (force)`);
    await admin.query(`create database ${BENCH_DATABASE}`);
    let statements = false;
    try {
      await admin.query('create extension if not exists pg_stat_statements');
      await admin.query('select pg_stat_statements_reset()');
      statements = true;
    } catch {
      // not preloaded on this server, or no right to create the extension: statements are "n/a"
    }
    const { rows } = await admin.query<{ server_version: string }>('show server_version');
    const postmaster = postmasterOf((await admin.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
    const url = withDatabase(adminUrl, BENCH_DATABASE);
    let closed = false;
    return {
      url,
      statements,
      serverVersion: rows[0]!.server_version,
      async statementCount() {
        if (!statements) return null;
        const result = await admin.query<{ calls: string | null }>(
          `select sum(s.calls) as calls from pg_stat_statements s join pg_database d on d.oid = s.dbid
           where d.datname = $1 and s.query not ilike '%pg_stat_statements%'`,
          [BENCH_DATABASE],
        );
        return Number(result.rows[0]?.calls ?? 0);
      },
      postgresPids() {
        if (postmaster === null) return null;
        return cluster ? postgresChildren(postmaster) : postgresChildren(postmaster, BENCH_DATABASE);
      },
      async resetStatements() {
        if (statements) await admin.query('select pg_stat_statements_reset()');
      },
      async analyze() {
        const bench = await connect(url);
        try {
          await bench.query('vacuum analyze');
        } finally {
          await bench.end();
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        try {
          if (!cluster && !keep) await admin.query(`drop database if exists ${BENCH_DATABASE} with (force)`);
        } finally {
          await admin.end().catch(() => undefined);
          cluster?.destroy();
        }
      },
      destroySync() {
        cluster?.destroy();
      },
    };
  } catch (error) {
    await admin.end().catch(() => undefined);
    cluster?.destroy();
    throw error;
  }
}
