// SIGTERM under load: /readyz answers 503 first while the listener stays open for the drain,
// requests in flight finish with their normal answers, and the process exits 0.
import pg from 'pg';
import { OPERATIONS, pollReadiness, send, startLoad } from '../client.js';
import { sample, withSample } from '../report.js';
import { sleep, startGateway } from '../server.js';
import { waitForLockWaiters, type ScenarioContext } from './context.js';

const DRAIN_MS = 2000;
const SLOW = [OPERATIONS.restListContacts, OPERATIONS.graphqlLists];
const SLOW_COUNT = 4;
const RACE_MS = 500;
const SIGNAL_LATENCY_MS = 100;

export async function sigtermScenario(ctx: ScenarioContext): Promise<void> {
  const { report } = ctx;
  report.section('SIGTERM under load');
  const databaseUrl = await ctx.createDatabase('faults_sigterm');
  const gateway = await startGateway('sigterm', ctx.logDir, {
    DATABASE_URL: databaseUrl,
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    DB_POOL_MAX: '20', // the slow requests hold up to two connections each; the load needs its own
  });
  ctx.watch(gateway);
  for (let i = 0; i < 5; i++) await send(gateway.url, OPERATIONS.restCreateContact);

  // Slow requests: a separate session holds a lock on contacts, so these wait inside PostgreSQL.
  const locker = new pg.Client({ connectionString: databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table contacts in access exclusive mode');
    const slow = Array.from({ length: SLOW_COUNT }, (_, i) => send(gateway.url, SLOW[i % SLOW.length]!, 60_000));
    const waiting = await waitForLockWaiters(locker, SLOW_COUNT);
    report.check(`${SLOW_COUNT} slow requests are in flight (waiting in PostgreSQL)`, waiting >= SLOW_COUNT, `${waiting} statements wait`);

    const load = startLoad(gateway.url, [OPERATIONS.restListAgents, OPERATIONS.graphqlMe], 3);
    const readiness = pollReadiness(gateway.url, 20);
    await sleep(500);
    const signalAt = Date.now();
    gateway.child.kill('SIGTERM');
    // The slow requests outlive the drain: they are still running when the listener closes.
    await sleep(DRAIN_MS + 1000);
    await locker.query('commit');
    const slowOutcomes = await Promise.all(slow);
    const exit = await Promise.race([gateway.exited, sleep(30_000).then(() => 'still running after 30 s')]);
    const exitedAt = Date.now();
    const outcomes = await load.stop();
    const ready = await readiness.stop();

    // Readiness goes 503 first, while the listener is still open.
    const probesAfter = ready.filter((r) => r.sentAt >= signalAt);
    const firstRefused = [...probesAfter, ...outcomes.filter((o) => o.sentAt >= signalAt)]
      .filter((r) => r.transportError === 'ECONNREFUSED')
      .reduce((min, r) => Math.min(min, r.sentAt), Infinity);
    // A probe sent in the same instant as the signal may be answered before the process handles it.
    const answered = probesAfter.filter((r) => r.status !== undefined && r.sentAt >= signalAt + SIGNAL_LATENCY_MS);
    const notReady = answered.filter((r) => r.status === 503);
    report.check(
      '/readyz answers 503 from the signal on, while the listener is still open',
      answered.length > 0 && notReady.length === answered.length && notReady[0]!.at < firstRefused,
      withSample(
        `${notReady.length} probes answered 503`,
        answered.filter((r) => r.status !== 503),
      ),
    );
    const closedAfter = firstRefused - signalAt;
    report.check(
      `the listener closes only after the drain (SHUTDOWN_DRAIN_MS=${DRAIN_MS})`,
      Number.isFinite(closedAfter) && closedAfter >= DRAIN_MS * 0.9,
      Number.isFinite(closedAfter) ? `connections refused from ${closedAfter} ms after the signal` : 'never refused a connection',
    );
    // The listener closes at the end of the drain (by the first refused connection at the latest): a
    // request sent within RACE_MS of that moment may be answered, refused or cut (that is what the
    // drain is for); outside it, the outcome is certain.
    const closeAt = Math.min(signalAt + DRAIN_MS, firstRefused);
    const drained = outcomes.filter((o) => o.sentAt >= signalAt && o.sentAt < closeAt - RACE_MS);
    report.check(
      'requests sent during the drain are answered 2xx',
      drained.length > 0 && drained.every((o) => o.ok),
      withSample(
        `${drained.length} requests`,
        drained.filter((o) => !o.ok).map((o) => [o.op, o.status, o.transportError]),
      ),
    );
    // The same race at the other edge: a request issued just after the first refusal may still go out
    // on a keep-alive socket the closing server is resetting (its connect happened earlier).
    const late = outcomes.filter((o) => o.sentAt >= firstRefused + RACE_MS && o.sentAt < exitedAt);
    report.check(
      'after the drain, new connections are refused at once (no hang, no half-open answer)',
      late.length > 0 && late.every((o) => o.transportError === 'ECONNREFUSED'),
      withSample(
        `${late.length} requests`,
        late.filter((o) => o.transportError !== 'ECONNREFUSED').map((o) => [o.op, o.status, o.transportError]),
      ),
    );

    // Requests accepted before the signal finish with their normal answer.
    const slowBad = slowOutcomes.filter((o) => !o.ok || o.status !== 200);
    const slowLast = Math.max(...slowOutcomes.map((o) => o.doneAt));
    report.check(
      `the ${SLOW_COUNT} requests in flight at the signal answer 200 with their data, after the listener closed`,
      slowBad.length === 0 && slowLast > firstRefused,
      withSample(
        `last answered ${slowLast - signalAt} ms after the signal`,
        slowBad.map((o) => [o.op, o.status, o.code, o.transportError]),
      ),
    );
    const before = outcomes.filter((o) => o.sentAt < signalAt);
    const beforeBad = before.filter((o) => !o.ok);
    report.check(
      'every request of the load sent before the signal answers 2xx',
      beforeBad.length === 0,
      withSample(
        `${before.length} requests`,
        beforeBad.map((o) => [o.op, o.status, o.transportError]),
      ),
    );
    const racing = outcomes.filter((o) => o.sentAt >= closeAt - RACE_MS && o.sentAt < firstRefused + RACE_MS);
    report.note(
      `sent while the listener was closing: ${racing.filter((o) => o.ok).length} answered, ` +
        `${racing.filter((o) => o.transportError === 'ECONNREFUSED').length} refused, ` +
        `${racing.filter((o) => o.transportError && o.transportError !== 'ECONNREFUSED').length} cut`,
    );
    const errors = outcomes.filter((o) => o.status !== undefined && !o.ok);
    report.check('no error answer during the shutdown', errors.length === 0, sample(errors.map((o) => [o.op, o.status, o.code])));
    report.check('the process exits with code 0', exit === 0, `exit ${exit}, ${exitedAt - signalAt} ms after the signal`);
  } finally {
    await locker.end().catch(() => {});
  }
}
