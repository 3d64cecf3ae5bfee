import { hash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

// The kept read statements (read-model.ts) on PostgreSQL, run as prepared statements straight on the
// pool's connections. Through the ORM's connection a read's values are written into its SQL as
// literals (MikroORM formats every statement before Kysely sends it), so PostgreSQL parses and plans
// a list page's statement, a few kilobytes of JSON-building SQL, on every request, and the gateway
// formats it and passes it through Kysely's executor: about a tenth of a REST list request's CPU, and
// more of PostgreSQL's. A kept statement's text never changes, so each connection parses it once,
// under a name taken from its text, and a request sends only the name and the values.
//
// What stays with the ORM: a read inside a transaction (it must run on the transaction's connection),
// PGlite (one connection, in its thread, no pool), and a statement PostgreSQL cannot prepare (a value
// whose type only its literal told; tried once, then never again).

/**
 * Statements one connection keeps prepared at most. PostgreSQL keeps a prepared statement (and its
 * cached plan) for the session's life, and the kept shapes are many where GraphQL selections vary;
 * a connection past this many is closed when released (the pool opens a fresh one), so a session's
 * memory does not grow with every new shape.
 */
export const MAX_PREPARED_PER_CONNECTION = 100;

/** The names each pool connection has prepared. */
const PREPARED = new WeakMap<PoolClient, Set<string>>();

/** The pool behind each ORM connection that has one (PostgreSQL's; see openDatabase). */
const POOLS = new WeakMap<object, Pool>();

/** Kept reads on `connection` (the ORM's) run on `pool`, the pg pool it was built with. */
export function preparePoolReads(connection: object, pool: Pool): void {
  POOLS.set(connection, pool);
}

export function poolOf(connection: object): Pool | undefined {
  return POOLS.get(connection);
}

export interface PreparedStatement {
  /** Unique per text: a connection keeps each name's statement for its life, so one name never names two texts. */
  readonly name: string;
  /** The kept SQL with `$1`…`$n` for its `?` placeholders, in order. */
  readonly text: string;
}

/** `sql`, whose every `?` is a placeholder (as the read model keeps it), as a statement to prepare. */
export function preparedStatement(sql: string): PreparedStatement {
  let next = 0;
  return { name: `read_${hash('sha256', sql).slice(0, 24)}`, text: sql.replace(/\?/g, () => `$${++next}`) };
}

/** 42P18 indeterminate_datatype: a parameter whose type nothing in the statement tells (a literal's quotes did). */
export function cannotPrepare(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '42P18';
}

/**
 * `statement`'s rows for `values`, on a connection of `pool`. `signal` aborts it as the ORM's reads are
 * aborted with the request (`cancel query`): not started once aborted; running, cancelled in
 * PostgreSQL from another connection, and the connection kept until the cancel has been delivered, so
 * it can only reach this statement or an idle session, never the next statement on the connection.
 * An aborted read throws the signal's reason.
 */
export async function runPrepared(pool: Pool, statement: PreparedStatement, values: unknown[], signal?: AbortSignal): Promise<Record<string, unknown>[]> {
  signal?.throwIfAborted();
  const client = await pool.connect();
  let cancelling: Promise<unknown> | undefined;
  const cancel = () => {
    const pid = (client as PoolClient & { processID?: number }).processID;
    cancelling = pool.query('select pg_cancel_backend($1)', [pid]).catch(() => undefined);
  };
  let broken: Error | undefined;
  let prepared = PREPARED.get(client);
  if (!prepared) PREPARED.set(client, (prepared = new Set()));
  try {
    signal?.throwIfAborted();
    signal?.addEventListener('abort', cancel, { once: true });
    prepared.add(statement.name);
    const result = await client.query<Record<string, unknown>>({ name: statement.name, text: statement.text, values });
    return result.rows;
  } catch (error) {
    signal?.throwIfAborted();
    // An error PostgreSQL did not report (no SQLSTATE) left the connection in no known state: dropped from the pool.
    if (typeof (error as { code?: unknown } | null)?.code !== 'string') broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (cancelling) await cancelling;
    client.release(broken ?? prepared.size > MAX_PREPARED_PER_CONNECTION);
  }
}
