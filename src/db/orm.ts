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
import { PgliteThreadClient } from './pglite-thread-client.js';
import { LinedPGliteDialect } from './pglite-dialect.js';
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
  /** An embedded database to use instead of opening one (tests load a migrated template); the caller closes it. */
  pglite?: EmbeddedClient;
}

export interface Database {
  orm: MikroORM;
  kind: DatabaseKind;
  em: EntityManager;
  isReachable(): Promise<boolean>;
  /**
   * Fork options that tie a request's statements to its abort signal: none starts once it has
   * fired, and on PostgreSQL the running ones are cancelled (`pg_cancel_backend`, sent by Kysely on
   * a separate connection so a full pool cannot hold it up). PGlite has one connection (in its thread)
   * and no cancel: a running statement finishes, the request just stops waiting for it.
   */
  abortOptions(signal: AbortSignal | undefined): { signal?: AbortSignal; inflightQueryAbortStrategy?: InflightQueryAbortStrategy };
  /** PGlite (its thread), for what the ORM does not wrap: LISTEN (the event bus). Undefined on PostgreSQL. */
  embedded?: EmbeddedClient;
  /** Connections of the PostgreSQL pool; undefined on PGlite, which has one connection and no pool. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  /** Statements of requests and of background work waiting for PGlite's one session; undefined on PostgreSQL. */
  embeddedWaiting(): { requests: number; background: number } | undefined;
  close(): Promise<void>;
}

export { DatabaseInUseError } from './errors.js';

/** What the gateway uses of the embedded database: PgliteThreadClient, or a PGlite a test hands in. */
export type EmbeddedClient = Pick<PgliteThreadClient, 'query' | 'transaction' | 'exec' | 'listen' | 'close' | 'closed' | 'ready' | 'waitReady'> &
  Partial<Pick<PgliteThreadClient, 'lost'>>;

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
  /** The embedded database's thread when this call started it (not a test's instance). */
  let ownThread: PgliteThreadClient | undefined;
  let embedded: EmbeddedClient | undefined;
  let dialect: LinedPGliteDialect | undefined;
  if (options.databaseUrl) {
    kind = 'postgresql';
    // Each driver is loaded only where it is used: pg for PostgreSQL, PGlite's for the embedded one.
    const { MikroORM: PostgresORM } = await import('@mikro-orm/postgresql');
    orm = (await openPostgres(options.databaseUrl, () =>
      PostgresORM.init({
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
      }),
    )) as unknown as MikroORM;
  } else {
    kind = 'pglite';
    const inMemory = options.pglite !== undefined || options.dataDir.startsWith('memory:');
    if (!inMemory) release = claimDataDir(options.dataDir);
    let thread: PgliteThreadClient | undefined;
    try {
      // PGlite runs in a thread of its own (pglite-thread-client.ts), which this opens and closes.
      embedded = options.pglite ?? (thread = await PgliteThreadClient.create(inMemory ? {} : { dataDir: join(options.dataDir, 'pglite') }));
      const { MikroORM: PgliteORM } = await import('@mikro-orm/pglite');
      // Kysely's PGlite dialect with requests served before background work (pglite-dialect.ts). Handed
      // as a function: MikroORM deep-copies its options and keeps a function by reference. Kysely closes
      // what it is given when the ORM closes: it is given a view whose close does nothing, as the
      // client is closed below (or is a test's, reused by the file's next app).
      const client = embedded;
      const view = {
        query: client.query.bind(client),
        transaction: client.transaction.bind(client),
        close: async () => {},
        get closed() {
          return client.closed;
        },
        get ready() {
          return client.ready;
        },
        waitReady: client.waitReady,
      };
      dialect = new LinedPGliteDialect({ pglite: view as never });
      const lined = dialect;
      orm = (await PgliteORM.init({ ...sharedOptions(options), driverOptions: () => lined })) as unknown as MikroORM;
    } catch (error) {
      await thread?.close();
      release();
      throw error;
    }
    ownThread = thread;
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
    await ownThread?.close();
    release();
    throw (options.databaseUrl && describeDatabaseUrlFailure(options.databaseUrl, error)) || error;
  }
  return {
    orm,
    kind,
    em,
    embedded,
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
    embeddedWaiting() {
      return dialect?.line.waiting;
    },
    async close() {
      await orm.close(true);
      await ownThread?.close();
      release();
    },
  };
}
