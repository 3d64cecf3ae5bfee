import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';

/** How long a checked-out connection the server ended may stay unreleased before the pool takes it back. */
export const ENDED_CONNECTION_GRACE_MS = 1000;

/**
 * Gives the pool back the connections that the server ended while they were checked out and that
 * their holder never releases.
 *
 * Kysely's controlled transaction (which MikroORM's transactions use) releases its connection only
 * when COMMIT or ROLLBACK succeeds, and never when BEGIN fails
 * ([kysely-org/kysely#1990](https://github.com/kysely-org/kysely/issues/1990)). When the server
 * ends a session inside a transaction (a `pg_ctl stop -m fast` ends every session so, as does
 * `pg_terminate_backend`), the statement and then the rollback fail on the dead connection, and
 * the connection stays checked out for good. Each one takes a place in the pool: once the pool is
 * full of them, every request waits out the acquire timeout and answers 503, even after the
 * server is back.
 *
 * A connection that has ended cannot run anything again, so nothing is lost by taking it back: a
 * holder that is about to release it does so at once (its statement failed the moment the
 * connection ended), and one that has not after `graceMs` never will. The pool discards it (it is
 * released with an error) and opens a new one when asked. The holder's own later release, if any,
 * does nothing. Each one taken back is logged at warn.
 */
export function releaseEndedConnections(pool: Pool, { graceMs = ENDED_CONNECTION_GRACE_MS, logger }: { graceMs?: number; logger?: Logger } = {}): void {
  const checkedOut = new Set<PoolClient>();
  pool.on('connect', (client) => {
    client.once('end', () => {
      if (!checkedOut.has(client)) return;
      setTimeout(() => {
        if (!checkedOut.has(client)) return;
        checkedOut.delete(client);
        client.release(new Error('The server ended this connection while it was checked out, and it was not released'));
        client.release = () => {};
        logger?.warn({ graceMs }, 'database connection ended by the server while checked out and not released; taken back into the pool');
      }, graceMs).unref();
    });
  });
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
}
