// The embedded database's own thread: one PGlite, owned here, so that no statement runs on the main
// thread's event loop. The main thread talks to it through PgliteThreadClient (pglite-thread-client.ts)
// over this thread's port; rows come back by structured clone, already parsed as MikroORM parses them.
//
// This file imports packages only (and types), so Node runs it as it is: as TypeScript with its types
// stripped when the tests run the sources, as the built JavaScript from dist/ otherwise.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { ThreadInit, ThreadReply, ThreadRequest, WireError } from './pglite-thread-client.js';

const port = parentPort!;
const init = workerData as ThreadInit;

/**
 * MikroORM's own PGlite type parsers (dates, timestamps and intervals kept as text), as its
 * PgliteConnection hands them to the PGlite it creates itself: the same function, with the same
 * array parser, read from the installed packages (neither exports the file, so it is found by path).
 */
async function mikroOrmParsers(): Promise<Record<number, (text: string) => unknown>> {
  const require = createRequire(import.meta.url);
  const sqlPackage = dirname(require.resolve('@mikro-orm/sql/package.json'));
  const { createPostgreSqlTypeParsers } = (await import(pathToFileURL(join(sqlPackage, 'dialects/postgresql/typeOverrides.js')).href)) as {
    createPostgreSqlTypeParsers(arrayParse: (text: string) => unknown): Record<number, (text: string) => unknown>;
  };
  const pgliteRequire = createRequire(require.resolve('@mikro-orm/pglite/package.json'));
  const array = pgliteRequire('postgres-array') as { parse(text: string): unknown };
  return createPostgreSqlTypeParsers((text) => array.parse(text));
}

/** A PGlite error as plain data: its message and its SQLSTATE fields, which MikroORM maps to its exceptions. */
function wire(error: unknown): WireError {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: WireError = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (key === 'params' || key === 'queryOptions') continue; // a request's values stay where they came from
    if (value === undefined || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return fields;
}

/** An open transaction: PGlite's callback waits on `finish` until the main thread commits or rolls back. */
interface Held {
  tx: Transaction;
  finish(commit: boolean): void;
  done: Promise<void>;
}

const ROLLBACK = Symbol('rollback');
const held = new Map<number, Held>();
const listening = new Map<string, () => Promise<void>>();
let nextTransaction = 1;

function reply(message: ThreadReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

async function begin(db: PGlite): Promise<number> {
  const id = nextTransaction++;
  let finish!: (commit: boolean) => void;
  const decided = new Promise<void>((resolve, reject) => {
    finish = (commit) => (commit ? resolve() : reject(ROLLBACK));
  });
  let started!: () => void;
  const begun = new Promise<void>((resolve) => (started = resolve));
  const done = db
    .transaction(async (tx) => {
      held.set(id, { tx, finish, done });
      started();
      await decided;
    })
    .then(
      () => undefined,
      (error: unknown) => {
        if (error !== ROLLBACK) throw error;
      },
    );
  // BEGIN itself failed (the database is closing): the transaction never started.
  await Promise.race([begun, done.then(() => Promise.reject(new Error('the transaction ended before it began')))]);
  return id;
}

async function end(id: number, commit: boolean): Promise<void> {
  const transaction = held.get(id);
  if (!transaction) throw new Error(`no open transaction ${id}`);
  transaction.finish(commit);
  try {
    await transaction.done;
  } finally {
    held.delete(id);
  }
}

function target(db: PGlite, tx: number | undefined): PGlite | Transaction {
  if (tx === undefined) return db;
  const transaction = held.get(tx);
  if (!transaction) throw new Error(`no open transaction ${tx}`);
  return transaction.tx;
}

async function handle(db: PGlite, request: ThreadRequest): Promise<void> {
  try {
    switch (request.op) {
      case 'query': {
        const result = await target(db, request.tx).query(request.sql, request.params, { rowMode: request.rowMode ?? 'object' });
        return reply({ id: request.id, ok: true, value: { rows: result.rows, affectedRows: result.affectedRows, fields: result.fields } });
      }
      case 'exec': {
        const results = await target(db, request.tx).exec(request.sql);
        return reply({
          id: request.id,
          ok: true,
          value: results.map((result) => ({ rows: result.rows, affectedRows: result.affectedRows, fields: result.fields })),
        });
      }
      case 'begin':
        return reply({ id: request.id, ok: true, value: await begin(db) });
      case 'end':
        await end(request.tx, request.commit);
        return reply({ id: request.id, ok: true, value: null });
      case 'listen': {
        if (!listening.has(request.channel)) {
          const channel = request.channel;
          listening.set(channel, await db.listen(channel, (payload) => reply({ notify: channel, payload })));
        }
        return reply({ id: request.id, ok: true, value: null });
      }
      case 'unlisten': {
        const stop = listening.get(request.channel);
        listening.delete(request.channel);
        await stop?.();
        return reply({ id: request.id, ok: true, value: null });
      }
      case 'dump': {
        const dump = await db.dumpDataDir(request.compression);
        const bytes = await dump.arrayBuffer();
        return reply({ id: request.id, ok: true, value: bytes }, [bytes]);
      }
      case 'close':
        for (const transaction of held.values()) transaction.finish(false);
        await db.close();
        reply({ id: request.id, ok: true, value: null });
        port.close();
        return;
    }
  } catch (error) {
    reply({ id: request.id, ok: false, error: wire(error) });
  }
}

try {
  const db = await PGlite.create({
    ...(init.dataDir ? { dataDir: init.dataDir } : {}),
    ...(init.loadDataDir ? { loadDataDir: new Blob([init.loadDataDir]) } : {}),
    parsers: await mikroOrmParsers(),
    // The extensions the migrations create (PostgreSQL has them from its contrib package, docs/operating.md).
    extensions: { pg_trgm },
  });
  port.on('message', (request: ThreadRequest) => void handle(db, request));
  reply({ ready: true });
} catch (error) {
  reply({ failed: wire(error) });
}
