import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { InflightQueryAbortStrategy, MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { ReflectMetadataProvider } from '@mikro-orm/decorators/legacy';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';
import { releaseEndedConnections } from './ended-connections.js';
import { preparePoolReads } from './prepared-reads.js';
import { contextEntityManager } from './request-scope.js';
import { DatabaseInUseError, describeDatabaseUrlFailure } from './errors.js';

export type DatabaseKind = 'pglite' | 'postgresql';

export interface DatabaseOptions {
  /** postgres:// URL; when absent the embedded PGlite database is used. */
  databaseUrl?: string;
  /** Where the embedded database lives; `memory://` keeps it in memory (tests). */
  dataDir: string;
  migrate: boolean;
  logger?: Logger;
  /** PostgreSQL only: pool size, wait for a connection and statement timeout (0 = none). */
  pool?: { max: number; acquireTimeoutMs: number; statementTimeoutMs: number };
  /** PostgreSQL only: kept reads as named prepared statements on the pool (prepared-reads.ts); default true. */
  preparedReads?: boolean;
  /** A PGlite instance to use instead of opening one (tests load a migrated template). */
  pglite?: unknown;
}

export interface Database {
  orm: MikroORM;
  kind: DatabaseKind;
  em: EntityManager;
  isReachable(): Promise<boolean>;
  /**
   * Fork options that tie a request's statements to its abort signal: none starts once it has
   * fired, and on PostgreSQL the running ones are cancelled (`pg_cancel_backend`, sent by Kysely on
   * a separate connection so a full pool cannot hold it up). PGlite has one in-process connection
   * and no cancel: a running statement finishes, the request just stops waiting for it.
   */
  abortOptions(signal: AbortSignal | undefined): { signal?: AbortSignal; inflightQueryAbortStrategy?: InflightQueryAbortStrategy };
  /** Connections of the PostgreSQL pool; undefined on PGlite, which has one connection and no pool. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  close(): Promise<void>;
}

export { DatabaseInUseError } from './errors.js';

function sharedOptions(options: DatabaseOptions) {
  return {
    entities: ENTITIES,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: false },
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: 'mikro_orm_migrations',
      snapshot: false,
      snapshotOnMigrate: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
    },
    // A request's fork is made on its first use (request-scope.ts), not for every request.
    context: contextEntityManager,
    debug: false,
    logger: (message: string) => options.logger?.debug({ orm: true }, message),
  };
}

/** PGlite on disk can be held by one process only; a pid file tells the others. */
function claimDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = join(dir, 'pglite.pid');
  if (existsSync(lock)) {
    const pid = Number(readFileSync(lock, 'utf8'));
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
      throw new DatabaseInUseError(
        `the embedded database in ${dir} is in use by process ${pid}; stop that process first (or set DATABASE_URL to use PostgreSQL)`,
      );
    }
  }
  writeFileSync(lock, String(process.pid));
  return () => rmSync(lock, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A refused connection, a bad password or a missing database is told as a DATABASE_URL problem. */
async function openPostgres<T>(databaseUrl: string, init: () => Promise<T>): Promise<T> {
  try {
    return await init();
  } catch (error) {
    throw describeDatabaseUrlFailure(databaseUrl, error) ?? error;
  }
}

/** Opens PostgreSQL (DATABASE_URL) or the embedded PGlite, and applies pending migrations. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let orm: MikroORM;
  let release = () => {};
  let kind: DatabaseKind;
  let pool: Pool | undefined;
  if (options.databaseUrl) {
    kind = 'postgresql';
    // Each driver is loaded only where it is used: pg for PostgreSQL, PGlite's for the embedded one.
    const { MikroORM: PostgresORM } = await import('@mikro-orm/postgresql');
    orm = (await openPostgres(options.databaseUrl, () => PostgresORM.init({
      ...sharedOptions(options),
      clientUrl: options.databaseUrl,
      pool: { min: 0, max: options.pool?.max ?? 10 },
      // Handed to pg's Pool: a per-connection statement timeout, and a bounded wait for a free
      // connection so an exhausted pool answers 503 fast instead of queueing without end.
      driverOptions: {
        ...(options.pool?.statementTimeoutMs ? { statement_timeout: options.pool.statementTimeoutMs } : {}),
        connectionTimeoutMillis: options.pool?.acquireTimeoutMs ?? 5000,
        onPoolCreated: (created: Pool) => {
          pool = created;
          releaseEndedConnections(created, { logger: options.logger });
        },
      },
    }))) as unknown as MikroORM;
  } else {
    kind = 'pglite';
    const inMemory = options.pglite !== undefined || options.dataDir.startsWith('memory:');
    const dbPath = join(options.dataDir, 'pglite');
    if (!inMemory) release = claimDataDir(options.dataDir);
    try {
      const { MikroORM: PgliteORM } = await import('@mikro-orm/pglite');
      orm = (await PgliteORM.init({
        ...sharedOptions(options),
        ...(inMemory ? {} : { dbName: dbPath }),
        ...(options.pglite ? { driverOptions: { pglite: options.pglite } } : {}),
      })) as unknown as MikroORM;
    } catch (error) {
      release();
      throw error;
    }
  }
  const em = orm.em as unknown as EntityManager;
  try {
    if (options.migrate) await orm.migrator.up();
    // The read model's kept statements run prepared on the pool (prepared-reads.ts). Asked of the
    // connection, which opens it if nothing has yet (without migrations nothing has at this point).
    if (kind === 'postgresql' && options.preparedReads !== false) {
      const connection = em.getDriver().getConnection('write') as unknown as { getNativeClient(): Promise<Pool> };
      preparePoolReads(connection, await connection.getNativeClient());
    }
  } catch (error) {
    await orm.close(true);
    release();
    throw (options.databaseUrl && describeDatabaseUrlFailure(options.databaseUrl, error)) || error;
  }
  return {
    orm,
    kind,
    em,
    async isReachable() {
      try {
        await em.fork().getConnection().execute('select 1');
        return true;
      } catch {
        return false;
      }
    },
    abortOptions(signal) {
      if (!signal) return {};
      return { signal, inflightQueryAbortStrategy: kind === 'postgresql' ? 'cancel query' : 'ignore query' };
    },
    poolStats() {
      return pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : undefined;
    },
    async close() {
      await orm.close(true);
      release();
    },
  };
}
