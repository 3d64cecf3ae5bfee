// PostgreSQL restarted under load: the gateway stays up, refuses with 503 + Retry-After while the
// database is down, serves again within 5 s of PostgreSQL being back, and lost no acknowledged write.
import { OPERATIONS, isProperRefusal, send, startLoad, pollReadiness, type Outcome } from '../client.js';
import { sample, withSample } from '../report.js';
import { sleep, startGateway } from '../server.js';
import { withClient, type ScenarioContext } from './context.js';

const DOWN_MS = 2500;
const RECOVERY_LIMIT_MS = 5000;
const LOAD = [
  OPERATIONS.restCreateContact,
  OPERATIONS.graphqlLists,
  OPERATIONS.restListContacts,
  OPERATIONS.graphqlCreateContact,
  OPERATIONS.restCreateAgent,
  OPERATIONS.restListAgents,
];

interface Cycle {
  mode: 'immediate' | 'fast';
  stopCalled: number;
  stopReturned: number;
  startCalled: number;
  startReturned: number;
  /** When REST and GraphQL both answered 2xx again, and /readyz 200. */
  servedAt?: number;
  readyAt?: number;
}

function requestIdOf(outcome: Outcome): string | undefined {
  const body = outcome.body as { requestId?: string; errors?: { extensions?: { requestId?: string } }[] } | undefined;
  return body?.requestId ?? body?.errors?.[0]?.extensions?.requestId;
}

/** Polls both doors until each answered 2xx; the time it happened, or undefined past the limit. */
async function waitServed(url: string, since: number): Promise<{ servedAt?: number; readyAt?: number }> {
  let rest: number | undefined;
  let graphql: number | undefined;
  let ready: number | undefined;
  while (Date.now() - since < RECOVERY_LIMIT_MS * 2 && (rest === undefined || graphql === undefined || ready === undefined)) {
    const [a, b, c] = await Promise.all([
      rest ?? send(url, OPERATIONS.restListAgents, 5000).then((o) => (o.ok ? o.doneAt : undefined)),
      graphql ?? send(url, OPERATIONS.graphqlMe, 5000).then((o) => (o.ok ? o.doneAt : undefined)),
      ready ??
        fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
          (r) => (r.ok ? Date.now() : undefined),
          () => undefined,
        ),
    ]);
    [rest, graphql, ready] = [a, b, c];
    if (rest === undefined || graphql === undefined || ready === undefined) await sleep(50);
  }
  return { servedAt: rest !== undefined && graphql !== undefined ? Math.max(rest, graphql) : undefined, readyAt: ready };
}

export async function pgRestartScenario(ctx: ScenarioContext): Promise<void> {
  const { report, cluster } = ctx;
  report.section('PostgreSQL restarted under load');
  const databaseUrl = await ctx.createDatabase('faults_restart');
  // The campaign runner ticks every 200 ms too: its queries fail while PostgreSQL is down, and the process must survive them.
  const gateway = await startGateway('pg-restart', ctx.logDir, {
    DATABASE_URL: databaseUrl,
    DB_POOL_MAX: '10',
    SHUTDOWN_DRAIN_MS: '0',
    RUNNER_ENABLED: 'true',
    RUNNER_INTERVAL_MS: '200',
  });
  ctx.watch(gateway);

  const load = startLoad(gateway.url, LOAD, 6);
  const readiness = pollReadiness(gateway.url, 100);
  await sleep(1500);
  const cycles: Cycle[] = [];
  for (const mode of ['immediate', 'fast'] as const) {
    const stopCalled = Date.now();
    await cluster.stopAsync(mode);
    const stopReturned = Date.now();
    await sleep(DOWN_MS);
    const startCalled = Date.now();
    await cluster.startAsync();
    const startReturned = Date.now();
    const cycle: Cycle = { mode, stopCalled, stopReturned, startCalled, startReturned, ...(await waitServed(gateway.url, startReturned)) };
    cycles.push(cycle);
    await sleep(3000); // served under load before the next fault
  }
  const loadStopped = Date.now();
  const outcomes = await load.stop();
  const ready = await readiness.stop();
  const exitedDuringLoad = gateway.exit();

  report.check(
    'the gateway process never exited while PostgreSQL went away twice',
    exitedDuringLoad === undefined,
    exitedDuringLoad === undefined ? 'still running' : `exited: ${exitedDuringLoad}`,
  );
  const [served, unavailable] = [outcomes.filter((o) => o.ok).length, outcomes.filter((o) => o.status === 503).length];
  report.note(`${outcomes.length} requests under load: ${served} answered 2xx, ${unavailable} answered 503`);
  const transport = outcomes.filter((o) => o.transportError);
  report.check(
    'every request got an HTTP answer (no reset, refused connection or timeout)',
    transport.length === 0,
    sample(transport.map((o) => [o.op, o.transportError])),
  );
  const fiveHundreds = outcomes.filter((o) => o.status === 500 || o.code === 'INTERNAL_SERVER_ERROR');
  const no500 = report.check(
    'no 500 / INTERNAL_SERVER_ERROR at any time',
    fiveHundreds.length === 0,
    sample(fiveHundreds.map((o) => [o.op, o.status, o.body])),
  );
  if (!no500) {
    const requestIds = fiveHundreds.map(requestIdOf).filter((id): id is string => !!id);
    for (const line of gateway.logLinesWith(requestIds.slice(0, 3))) report.note(line);
  }
  const refused = outcomes.filter((o) => !o.ok && !o.transportError);
  const improper = refused.filter((o) => !isProperRefusal(o));
  report.check(
    'every refusal is 503 UNAVAILABLE with Retry-After (problem+json on REST, extensions.code on GraphQL)',
    improper.length === 0,
    sample(improper.map((o) => [o.op, o.status, o.code, o.retryAfter ?? 'no Retry-After', o.body])),
  );

  for (const [index, cycle] of cycles.entries()) {
    const label = `pg_ctl stop -m ${cycle.mode}`;
    const down = (o: { sentAt: number; doneAt?: number; at?: number }) => o.sentAt >= cycle.stopReturned && (o.doneAt ?? o.at ?? Infinity) <= cycle.startCalled;
    const whileDown = outcomes.filter(down);
    const byDoor = (door: string) => whileDown.filter((o) => o.door === door && isProperRefusal(o)).length;
    const served = whileDown.filter((o) => o.ok);
    report.check(
      `${label}: while down, both doors answer 503 + Retry-After and nothing answers 2xx`,
      byDoor('rest') > 0 && byDoor('graphql') > 0 && served.length === 0,
      `REST 503: ${byDoor('rest')}, GraphQL 503: ${byDoor('graphql')}, 2xx: ${served.length}`,
    );
    const slowest = Math.max(0, ...whileDown.map((o) => o.doneAt - o.sentAt));
    report.check(`${label}: refusals while down are fast`, slowest < 2000, `slowest ${slowest} ms`);
    const readyDown = ready.filter(down);
    const readyWrong = readyDown.filter((r) => r.status !== 503);
    report.check(
      `${label}: /readyz answers 503 while down`,
      readyDown.length > 0 && readyWrong.length === 0,
      withSample(`${readyDown.length} probes`, readyWrong),
    );
    const servedIn = cycle.servedAt === undefined ? undefined : cycle.servedAt - cycle.startReturned;
    report.check(
      `${label}: REST and GraphQL answer 2xx within ${RECOVERY_LIMIT_MS / 1000} s of pg_ctl start returning`,
      servedIn !== undefined && servedIn <= RECOVERY_LIMIT_MS,
      servedIn === undefined ? 'not served again' : `${servedIn} ms`,
    );
    const readyIn = cycle.readyAt === undefined ? undefined : cycle.readyAt - cycle.startReturned;
    report.check(
      `${label}: /readyz answers 200 within ${RECOVERY_LIMIT_MS / 1000} s`,
      readyIn !== undefined && readyIn <= RECOVERY_LIMIT_MS,
      readyIn === undefined ? 'not ready again' : `${readyIn} ms`,
    );
    if (cycle.servedAt !== undefined) {
      // From half a second after both doors answered again until the next fault.
      const from = cycle.servedAt + 500;
      const until = cycles[index + 1]?.stopCalled ?? loadStopped;
      const after = outcomes.filter((o) => o.sentAt >= from && o.doneAt < until);
      const failed = after.filter((o) => !o.ok);
      report.check(
        `${label}: once served again, the load is answered 2xx`,
        after.length > 0 && failed.length === 0,
        withSample(
          `${after.length} requests`,
          failed.map((o) => [o.op, o.status, o.code]),
        ),
      );
    }
  }

  // Every write the gateway acknowledged is in the database.
  const acknowledged = outcomes.filter((o) => o.writes && o.ok);
  const missingIds = acknowledged.filter((o) => !o.id);
  const writesRefused = outcomes.filter((o) => o.writes && !o.ok).length;
  const missing: string[] = [];
  await withClient(databaseUrl, async (client) => {
    for (const table of ['contacts', 'agents'] as const) {
      const ids = acknowledged.filter((o) => o.writes === table && o.id).map((o) => o.id!);
      const found = await client.query<{ id: string }>(`select id from ${table} where id = any($1::uuid[])`, [ids]);
      const present = new Set(found.rows.map((row) => row.id));
      missing.push(...ids.filter((id) => !present.has(id)).map((id) => `${table}/${id}`));
    }
  });
  report.check(
    'every acknowledged write (201 / GraphQL data) is in the database afterwards',
    acknowledged.length > 0 && missing.length === 0 && missingIds.length === 0,
    withSample(`${acknowledged.length} acknowledged, ${writesRefused} refused, ${missing.length} missing`, [
      ...missing,
      ...missingIds.map((o) => [o.op, 'no id']),
    ]),
  );

  gateway.child.kill('SIGTERM');
  const code = await gateway.exited;
  report.check('the gateway then stops on SIGTERM with exit code 0', code === 0, `exit ${code}`);
}
