import { createHash, randomUUID } from 'node:crypto';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { MIGRATIONS } from '../../migrations/index.js';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/orm.js';
import { withClient, withDatabase } from '../support/pg-cluster.js';

/** PostgreSQL when TEST_DATABASE_URL is set (CI's throwaway cluster), PGlite otherwise. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/** A client on TEST_DATABASE_URL's own database, for creating and dropping the per-file ones. */
function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(TEST_DATABASE_URL!, run);
}

export interface TestDatabase {
  database: Database;
  /** The URL of this file's own PostgreSQL database; undefined on PGlite. */
  url?: string;
  drop(): Promise<void>;
}

/** A fresh database for one test file, built by the real migrations. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_DATABASE_URL) {
    const name = `gateway_test_${randomUUID().replaceAll('-', '')}`;
    await admin((client) => client.query(`create database ${name}`));
    const url = withDatabase(TEST_DATABASE_URL, name);
    const database = await openDatabase({ databaseUrl: url, dataDir: 'memory://', migrate: true });
    return {
      database,
      url,
      async drop() {
        await database.close();
        await admin((client) => client.query(`drop database if exists ${name} with (force)`));
      },
    };
  }
  const pglite = await migratedPglite();
  const database = await openDatabase({ dataDir: 'memory://', migrate: true, pglite });
  return {
    database,
    async drop() {
      await database.close();
      await pglite.close();
    },
  };
}

/**
 * A fresh in-memory PGlite takes ~4 s to create its cluster; loading a dump of one that the
 * migrations already ran on takes under 1 s. The dump is made once per set of migrations
 * (its file name carries their hash) and then shared by every test file and worker.
 *
 * The dump holds only the `postgres` database the gateway uses: template0 and template1 (nothing
 * creates a database on PGlite) are dropped and a checkpoint taken first, so each load untars 550
 * files instead of 1,165 and replays no WAL (about 0.2 CPU s less per file).
 */
async function migratedPglite(): Promise<PGlite> {
  const file = templateFile('tar');
  if (existsSync(file)) return PGlite.create({ loadDataDir: new Blob([readFileSync(file)]) });
  const pglite = await PGlite.create();
  const database = await openDatabase({ dataDir: 'memory://', migrate: true, pglite });
  await database.close();
  for (const template of ['template0', 'template1']) {
    await pglite.exec(`alter database ${template} is_template false`);
    await pglite.exec(`drop database ${template}`); // not in the same exec: it cannot run in a transaction
  }
  await pglite.exec('checkpoint');
  const dump = await pglite.dumpDataDir('none');
  const partial = `${file}.${process.pid}.${randomUUID()}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, file);
  return pglite;
}

/** How the dump is made; a change here must give new file names, as a new migration does. */
const TEMPLATE_FORMAT = 'postgres-only';

/** Where the templates of this set of migrations live: the name carries a hash of their names. */
function templateFile(kind: 'tar' | 'dir'): string {
  const key = createHash('sha256')
    .update([TEMPLATE_FORMAT, ...MIGRATIONS.map((migration) => migration.name)].join(','))
    .digest('hex')
    .slice(0, 16);
  return join(tmpdir(), kind === 'tar' ? `gateway-test-template-${key}.tar` : `gateway-test-datadir-${key}`);
}

/**
 * Puts a fresh, fully migrated embedded database where the server and the CLI look for it
 * (`DATA_DIR/pglite`), so a process started on `dataDir` skips creating the cluster and running
 * every migration (~5 s of CPU, each time a process test started on an empty DATA_DIR). The
 * on-disk template is made once per set of migrations from the in-memory one and copied per
 * call: every caller gets its own files.
 */
export async function seedMigratedDataDir(dataDir: string): Promise<void> {
  const template = templateFile('dir');
  if (!existsSync(template)) {
    if (!existsSync(templateFile('tar'))) await (await migratedPglite()).close(); // makes the dump
    const partial = `${template}.${process.pid}.${randomUUID()}`;
    const pglite = await PGlite.create({ dataDir: partial, loadDataDir: new Blob([readFileSync(templateFile('tar'))]) });
    await pglite.close();
    try {
      renameSync(partial, template);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another worker made it first
    }
  }
  cpSync(template, join(dataDir, 'pglite'), { recursive: true });
}
