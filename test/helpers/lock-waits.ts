import pg from 'pg';
import type { TestApp } from './app.js';
import type { TestDeadlines } from './deadlines.js';
import { eventually } from './eventually.js';

/**
 * The gateway's statements waiting for a lock `holder` holds, seen from a session of its own (in the
 * holder's transaction pg_stat_activity would stay the snapshot first read). PostgreSQL only.
 */
export async function statementsWaitingOn(app: TestApp, holder: pg.Client): Promise<string[]> {
  const observer = new pg.Client({ connectionString: app.db.url });
  await observer.connect();
  try {
    const { rows } = await observer.query<{ query: string }>(
      `select query from pg_stat_activity
        where datname = current_database() and pid not in (pg_backend_pid(), $1) and state = 'active' and wait_event_type = 'Lock'`,
      [(holder as unknown as { processID: number }).processID],
    );
    return rows.map((row) => row.query);
  } finally {
    await observer.end();
  }
}

/**
 * `send` (a request whose statement waits for `holder`'s lock) is answered 503 once its deadline
 * fires, and its statement, waiting while the request is under way, is then gone though the lock is
 * still held: cancelled, not left to run. The deadline fires when the statement is seen waiting
 * (`deadlines`, the app's), so neither a slow start nor a slow cancel on a loaded machine can fail it.
 */
export async function expectCancelledAtDeadline(app: TestApp, holder: pg.Client, deadlines: TestDeadlines, send: () => Promise<number>): Promise<void> {
  const sending = send();
  await eventually(
    () => statementsWaitingOn(app, holder),
    (waiting) => waiting.length === 1,
    { what: "the request's statement waiting for the lock", everyMs: 25 },
  );
  expect(deadlines.fire()).toBe(1);
  expect(await sending).toBe(503);
  await eventually(
    () => statementsWaitingOn(app, holder),
    (waiting) => waiting.length === 0,
    { what: 'the cancelled statement gone', everyMs: 25 },
  );
}

/** A session of its own that has run `statement` in a transaction it keeps open: whatever lock it took is held until `rollback`. */
export async function holdLock(app: TestApp, statement: string, params: unknown[] = []): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: app.db.url });
  await holder.connect();
  await holder.query('begin');
  await holder.query(statement, params);
  return holder;
}

/** Ends `holder`'s transaction, and with it its locks, and closes its session. */
export async function releaseLock(holder: pg.Client): Promise<void> {
  await holder.query('rollback');
  await holder.end();
}

/**
 * A lock taken by `take` before each test of the enclosing describe and released after it (PostgreSQL
 * only), with the app's `deadlines`. `expectCancelled` is expectCancelledAtDeadline against it; `letGo` ends its transaction and
 * begins another that holds nothing, so what a test sends next runs.
 */
export function lockEachTest(app: () => TestApp, take: () => Promise<pg.Client>, deadlines: TestDeadlines) {
  let holder: pg.Client;
  beforeEach(async () => {
    holder = await take();
  });
  afterEach(() => releaseLock(holder));
  return {
    expectCancelled: (send: () => Promise<number>) => expectCancelledAtDeadline(app(), holder, deadlines, send),
    letGo: async () => {
      await holder.query('rollback');
      await holder.query('begin');
    },
  };
}
