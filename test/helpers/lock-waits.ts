import pg from 'pg';
import type { TestApp } from './app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
 * `send` (a request whose statement waits for `holder`'s lock, to a gateway with a short request
 * timeout) is answered 503 within 2 s, and its statement, waiting while the request is under way, is
 * gone shortly after the answer though the lock is still held: cancelled, not left to run.
 */
export async function expectCancelledAtDeadline(app: TestApp, holder: pg.Client, send: () => Promise<number>): Promise<void> {
  const started = Date.now();
  const sending = send();
  await sleep(200);
  expect(await statementsWaitingOn(app, holder)).toHaveLength(1);
  expect(await sending).toBe(503);
  expect(Date.now() - started).toBeLessThan(2000);
  let left = await statementsWaitingOn(app, holder);
  for (let tries = 0; left.length > 0 && tries < 10; tries += 1) {
    await sleep(50);
    left = await statementsWaitingOn(app, holder);
  }
  expect(left).toEqual([]);
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
 * only). `expectCancelled` is expectCancelledAtDeadline against it; `letGo` ends its transaction and
 * begins another that holds nothing, so what a test sends next runs.
 */
export function lockEachTest(app: () => TestApp, take: () => Promise<pg.Client>) {
  let holder: pg.Client;
  beforeEach(async () => {
    holder = await take();
  });
  afterEach(() => releaseLock(holder));
  return {
    expectCancelled: (send: () => Promise<number>) => expectCancelledAtDeadline(app(), holder, send),
    letGo: async () => {
      await holder.query('rollback');
      await holder.query('begin');
    },
  };
}
