import { createHash, randomUUID } from 'node:crypto';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PgliteThreadClient } from '../../src/db/pglite-thread-client.js';
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
  const pglite = idlePglites.pop() ?? (await freshPglite());
  const database = await openDatabase({ dataDir: 'memory://', migrate: true, pglite });
  return {
    database,
    async drop() {
      await database.close();
      if (!(await emptied(pglite))) await pglite.close();
    },
  };
}

/**
 * Embedded databases of this test file that a closed app left, emptied, for the next app of the
 * same file: starting a PGlite from the dump costs about 0.7 CPU s (unpacking it into PGlite's
 * in-memory file system and starting the server), emptying one 10 to 40 ms. Each test file has
 * its own module registry, so files never share one.
 */
const idlePglites: PgliteThreadClient[] = [];

/**
 * Puts the database back as the dump has it and into the idle list; false when it cannot (the
 * caller closes it). Every table but the migrations' own is emptied with the triggers and foreign
 * keys off (`session_replication_role = replica`), so no event or notification comes of it, and
 * DISCARD ALL ends whatever the session held (settings, prepared statements, LISTENs, advisory
 * locks, temporary tables). No table has a sequence of its own to restart. A database whose schema
 * is no longer the dump's (its tables, columns, indexes, triggers and functions) is not reused.
 */
async function emptied(pglite: PgliteThreadClient): Promise<boolean> {
  if (pglite.closed) return false;
  try {
    if ((await schemaOf(pglite)) !== dumpSchema) return false;
    await pglite.exec(`set session_replication_role = replica;
      ${dumpTables!.map((name) => `delete from ${name};`).join('\n')}
      reset session_replication_role;`);
    await pglite.exec('discard all');
  } catch {
    return false;
  }
  idlePglites.push(pglite);
  return true;
}

/**
 * The schema of the dump, as `schemaOf` reads it, and the tables `emptied` empties (every table
 * of `public` but the migrations' own): taken from this file's first database. A database whose
 * digest still matches has these tables.
 */
let dumpSchema: string | undefined;
let dumpTables: string[] | undefined;

async function freshPglite(): Promise<PgliteThreadClient> {
  const pglite = await migratedPglite();
  if (dumpSchema === undefined) {
    const { rows } = await pglite.query<{ name: string }>(
      `select format('%I.%I', schemaname, tablename) as name from pg_tables
        where schemaname = 'public' and tablename <> 'mikro_orm_migrations'`,
    );
    dumpTables = rows.map((row) => row.name);
    dumpSchema = await schemaOf(pglite);
  }
  return pglite;
}

/** A digest of the `public` schema: relations and their columns, triggers, functions. */
async function schemaOf(pglite: PgliteThreadClient): Promise<string> {
  const { rows } = await pglite.query<{ digest: string }>(
    `select md5(string_agg(item, ',' order by item)) as digest from (
       select format('%s:%s', c.relkind, c.relname) as item
         from pg_class c where c.relnamespace = 'public'::regnamespace
       union all
       select format('%s.%s:%s:%s', c.relname, a.attname, a.atttypid, a.attnotnull)
         from pg_attribute a join pg_class c on c.oid = a.attrelid
        where c.relnamespace = 'public'::regnamespace and a.attnum > 0 and not a.attisdropped
       union all
       select format('trigger %s.%s:%s', t.tgrelid::regclass, t.tgname, t.tgenabled)
         from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = 'public'::regnamespace
       union all
       select format('function %s:%s', p.proname, md5(p.prosrc))
         from pg_proc p where p.pronamespace = 'public'::regnamespace
     ) items`,
  );
  return rows[0]!.digest;
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
async function migratedPglite(): Promise<PgliteThreadClient> {
  const file = templateFile('tar');
  // In its own thread, as the server runs it (src/db/pglite-thread-client.ts).
  if (existsSync(file)) return PgliteThreadClient.create({ loadDataDir: readFileSync(file) });
  const pglite = await PgliteThreadClient.create();
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

/** The migrated dump's bytes (made first if need be), for a test that starts a PGlite of its own. */
export async function migratedDump(): Promise<Uint8Array> {
  if (!existsSync(templateFile('tar'))) await (await migratedPglite()).close();
  return readFileSync(templateFile('tar'));
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
    const pglite = await PGlite.create({ dataDir: partial, loadDataDir: new Blob([readFileSync(templateFile('tar'))]), extensions: { pg_trgm } });
    await pglite.close();
    try {
      renameSync(partial, template);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another worker made it first
    }
  }
  cpSync(template, join(dataDir, 'pglite'), { recursive: true });
}
