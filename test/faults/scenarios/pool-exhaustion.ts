// An exhausted connection pool: every connection waits on a lock held by another session; requests
// beyond the pool answer 503 + Retry-After within about DB_POOL_ACQUIRE_TIMEOUT_MS, never hang and
// never 500; once the lock goes, the gateway serves normally again.
import pg from 'pg';
import { OPERATIONS, isProperRefusal, send, startLoad } from '../client.js';
import { sample, withSample } from '../report.js';
import { sleep, startGateway } from '../server.js';
import { waitForLockWaiters, type ScenarioContext } from './context.js';

const POOL_MAX = 2;
const ACQUIRE_MS = 500;
/** Generous for a busy 2-core machine: the point is "about the acquire timeout", not "until PostgreSQL frees a connection". */
const MARGIN_MS = 1500;
const LOAD = [
  OPERATIONS.restListAgents,
  OPERATIONS.graphqlMe,
  OPERATIONS.restCreateContact,
  OPERATIONS.graphqlCreateContact,
  OPERATIONS.restListContacts,
  OPERATIONS.graphqlLists,
];

export async function poolExhaustionScenario(ctx: ScenarioContext): Promise<void> {
  const { report } = ctx;
  report.section(`Pool exhaustion (DB_POOL_MAX=${POOL_MAX}, DB_POOL_ACQUIRE_TIMEOUT_MS=${ACQUIRE_MS})`);
  const databaseUrl = await ctx.createDatabase('faults_pool');
  const gateway = await startGateway('pool', ctx.logDir, {
    DATABASE_URL: databaseUrl,
    DB_POOL_MAX: String(POOL_MAX),
    DB_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
    DB_STATEMENT_TIMEOUT_MS: '20000',
    SHUTDOWN_DRAIN_MS: '0',
  });
  ctx.watch(gateway);
  for (let i = 0; i < 3; i++) await send(gateway.url, OPERATIONS.restCreateContact);

  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table contacts in access exclusive mode');
    // Lists of contacts wait on the lock, each holding a pool connection: the pool is soon all busy.
    const blockers = [send(gateway.url, OPERATIONS.restListContacts, 60_000), send(gateway.url, OPERATIONS.restListContacts, 60_000)];
    const waiting = await waitForLockWaiters(locker, POOL_MAX);
    report.check(`every pool connection is busy (${POOL_MAX} statements wait on the lock)`, waiting >= POOL_MAX, `${waiting} waiting`);

    const load = startLoad(gateway.url, LOAD, 12);
    const readyStarted = Date.now();
    const readyz = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(20_000) }).then(
      (res) => ({ status: res.status, ms: Date.now() - readyStarted }),
      (error: Error) => ({ status: undefined, ms: Date.now() - readyStarted, error: error.message }),
    );
    await sleep(2500);
    const outcomes = await load.stop();
    await locker.query('commit');
    const blocked = await Promise.all(blockers);

    report.note(`${outcomes.length} requests while the pool was exhausted`);
    const improper = outcomes.filter((o) => !isProperRefusal(o));
    report.check(
      'every request beyond the pool answers 503 UNAVAILABLE with Retry-After (never 500)',
      outcomes.length > 0 && improper.length === 0,
      sample(improper.map((o) => [o.op, o.status, o.code, o.transportError, o.retryAfter ?? 'no Retry-After'])),
    );
    const latencies = outcomes.map((o) => o.doneAt - o.sentAt).sort((a, b) => a - b);
    const slowest = latencies.at(-1) ?? 0;
    const median = latencies[Math.floor(latencies.length / 2)] ?? 0;
    report.check(
      `they answer within the acquire timeout + ${MARGIN_MS} ms (no hang)`,
      slowest <= ACQUIRE_MS + MARGIN_MS,
      `median ${median} ms, slowest ${slowest} ms`,
    );
    report.check(
      '/readyz answers 503 fast while the pool is exhausted',
      readyz.status === 503 && readyz.ms <= ACQUIRE_MS + MARGIN_MS,
      `${readyz.status} in ${readyz.ms} ms`,
    );
    const blockersBad = blocked.filter((o) => !o.ok && !isProperRefusal(o));
    report.check(
      'the requests that held the connections answer once the lock is gone (200, or 503 if they had waited for the pool)',
      blockersBad.length === 0,
      withSample(
        blocked.map((o) => o.status).join(', '),
        blockersBad.map((o) => [o.op, o.status, o.code, o.transportError]),
      ),
    );

    // Load over: the gateway serves normally again (one request at a time: two connections are
    // few, and a burst could still wait past the acquire timeout on a busy machine).
    await sleep(200);
    const after = [];
    for (const op of [...LOAD, ...LOAD]) after.push(await send(gateway.url, op, 10_000));
    const afterBad = after.filter((o) => !o.ok);
    const ready = await fetch(`${gateway.url}/readyz`).then(
      (res) => res.status,
      () => undefined,
    );
    report.check(
      'once the load stops, both doors answer 2xx again and /readyz is 200',
      afterBad.length === 0 && ready === 200,
      withSample(
        `${after.length - afterBad.length}/${after.length} 2xx, /readyz ${ready}`,
        afterBad.map((o) => [o.op, o.status, o.code]),
      ),
    );
  } finally {
    await locker.end().catch(() => {});
  }
  gateway.child.kill('SIGTERM');
  const code = await gateway.exited;
  report.check('the gateway then stops on SIGTERM with exit code 0', code === 0, `exit ${code}`);
}
