import pg from 'pg';
import type { PgCluster } from '../../support/pg-cluster.js';
import type { Report } from '../report.js';
import { sleep, type GatewayProcess } from '../server.js';

export interface ScenarioContext {
  cluster: PgCluster;
  report: Report;
  /** Where the gateways' logs go. */
  logDir: string;
  /** A fresh database on the cluster for one scenario. */
  createDatabase(name: string): Promise<string>;
  /** Marks a gateway whose log tail is printed when an assertion of the scenario failed. */
  watch(gateway: GatewayProcess): void;
}

export { withClient } from '../../support/pg-cluster.js';

/**
 * Waits until at least `count` statements of the database wait on a lock and that number has held
 * for 300 ms (a request may send more than one), so the requests are really in flight.
 */
export async function waitForLockWaiters(client: pg.Client, count: number, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let waiting = 0;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    // Inside a transaction pg_stat_activity is a snapshot taken once: clear it to see the present.
    await client.query('select pg_stat_clear_snapshot()');
    const result = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
    );
    if (result.rows[0]!.n !== waiting) stableSince = Date.now();
    waiting = result.rows[0]!.n;
    if (waiting >= count && Date.now() - stableSince >= 300) return waiting;
    await sleep(50);
  }
  return waiting;
}
