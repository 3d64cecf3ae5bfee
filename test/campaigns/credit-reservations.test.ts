import { createLogger } from '../../src/common/logger.js';
import { openDatabase } from '../../src/db/orm.js';
import { testRunner, waitFor } from '../runner/fixtures.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { SimulatedSwitch } from '../../src/modules/programs/runner/simulated-carrier.js';
import { CampaignCreditsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addCredits, ALWAYS_ANSWERED, buildCampaign, buildRunner, clock, loggedErrors, logs, poll, readExecution, sleep } from './fixtures.js';

// Credits reserved per runner in blocks (src/modules/programs/runner/credit-reservations.ts), seen
// through the doors: the balance a user reads counts what runners hold, creditsReserved says how
// much that is, and every reserved credit not spent comes back: on a stop, when a crashed runner's
// lease runs out, at completion; with two runners the credits charged are the contacts dialed.

/** The organization's credits on both doors, which must agree (`moving`: a runner is working, so they are read from REST alone). */
async function credits(org: TestOrganization, moving = false): Promise<{ creditBalance: number; creditsReserved: number }> {
  const rest = await org.rest.get('/api/organization');
  expect(rest.status).toBe(200);
  if (moving) return { creditBalance: rest.body.creditBalance, creditsReserved: rest.body.creditsReserved };
  const { organization } = await org.graphql.ok(CampaignCreditsDocument);
  expect({ creditBalance: organization.creditBalance, creditsReserved: organization.creditsReserved }).toEqual({
    creditBalance: rest.body.creditBalance,
    creditsReserved: rest.body.creditsReserved,
  });
  return { creditBalance: rest.body.creditBalance, creditsReserved: rest.body.creditsReserved };
}

/** The spends in the organization's ledger for one execution, summed (negative). */
async function ledgerSpent(org: TestOrganization, executionId: string): Promise<number> {
  const ledger = await org.rest.get('/api/organization/credit-ledger?limit=100&kind=spend');
  expect(ledger.status).toBe(200);
  return (ledger.body.data as { amount: number; executionId: string }[]).filter((entry) => entry.executionId === executionId).reduce((sum, entry) => sum + entry.amount, 0);
}

async function startedExecution(org: TestOrganization, programId: string): Promise<string> {
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  expect((await org.rest.post(`/api/executions/${created.body.id}/start`)).body.status).toBe('running');
  return created.body.id;
}

describe('credit reservations', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

  it('a running campaign shows its reservation inside the balance; a stop gives back what was not spent, on both doors', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 30, { maxConcurrentCalls: 2, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    await addCredits(org, 100);
    const id = await startedExecution(org, programId);
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'reserve-stop', speedMs: 5, weights: ALWAYS_ANSWERED });
    runner.start();
    try {
      const running = await poll(read, (execution) => execution.contactsCompleted >= 4);
      // The runner holds a block for the contacts still to call; the balance still counts it, since it is not spent.
      const during = await credits(org, true);
      expect(during.creditsReserved).toBeGreaterThan(0);
      expect(during.creditsReserved).toBeLessThanOrEqual(running.contactsPending + running.contactsInProgress);
      const stopped = await org.rest.post(`/api/executions/${id}/stop`);
      expect([stopped.status, stopped.body.status]).toEqual([200, 'stopped']);
      // Given back in the stop's own request: nothing is held for a stopped execution.
      expect((await credits(org, true)).creditsReserved).toBe(0);
      await poll(read, (execution) => execution.contactsInProgress === 0);
      await sleep(50);
    } finally {
      await runner.stop();
    }
    const end = await org.rest.get(`/api/executions/${id}`).then((res) => res.body as { creditsSpent: number; contactsCompleted: number; contactsFailed: number });
    expect(end.creditsSpent).toBe(end.contactsCompleted + end.contactsFailed);
    expect(end.creditsSpent).toBeLessThan(30);
    expect(await credits(org)).toEqual({ creditBalance: 100 - end.creditsSpent, creditsReserved: 0 });
    expect(await ledgerSpent(org, id)).toBe(-end.creditsSpent);
  });

  it('a crashed runner’s reservation comes back once its lease runs out, and another runner finishes the campaign with it', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 10, { maxConcurrentCalls: 2, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    await addCredits(org, 12);
    const id = await startedExecution(org, programId);
    let now = clock();
    const time = () => now;
    const leaseMs = 60_000;
    // The crashed runner: one tick (a claim of two calls paid from a block it reserved), its calls end, then it is never heard of again.
    const crashed = testRunner(app, {
      dialer: new SimulatedDialer({ seed: 'reserve-crash', speedMs: 0, weights: ALWAYS_ANSWERED }),
      logger: createLogger('warn', { write: () => undefined }),
      clock: time,
      leaseMs,
      simulatedSwitch: new SimulatedSwitch(),
    });
    await crashed.tick();
    await crashed.idle();
    const afterCrash = await readExecution(org, programId, id);
    expect(afterCrash).toMatchObject({ status: 'running', contactsCompleted: 2, contactsPending: 8 });
    // It reserved the block for the 10 contacts and spent 2: 8 held, and the balance still counts them.
    expect(await credits(org)).toEqual({ creditBalance: 10, creditsReserved: 8 });

    const { runner: survivor } = buildRunner(app, { seed: 'reserve-survivor', weights: ALWAYS_ANSWERED }, time);
    // Before the lease runs out the crashed runner's block is still held: the survivor reserves from what is left (2 credits).
    await survivor.tick();
    await survivor.idle();
    expect((await readExecution(org, programId, id)).contactsCompleted).toBe(4);
    expect(await credits(org)).toEqual({ creditBalance: 8, creditsReserved: 8 });
    // Out of free credits while 8 are held elsewhere: the execution waits, it is not paused for credits.
    await survivor.tick();
    await survivor.idle();
    expect(await readExecution(org, programId, id)).toMatchObject({ status: 'running', contactsCompleted: 4, contactsPending: 6 });

    now = new Date(now.getTime() + leaseMs + 1000);
    for (let tick = 0; tick < 20 && (await readExecution(org, programId, id)).status === 'running'; tick++) {
      await survivor.tick();
      await survivor.idle();
    }
    const end = await readExecution(org, programId, id);
    expect(end).toMatchObject({ status: 'completed', contactsCompleted: 10, contactsPending: 0, contactsInProgress: 0 });
    expect(await credits(org)).toEqual({ creditBalance: 2, creditsReserved: 0 });
    expect(await ledgerSpent(org, id)).toBe(-10);
    const [{ n }] = await app.sql<{ n: number }>('select count(*)::int as n from calls where execution_id = ?', [id]);
    expect(n).toBe(10);
  });

  it('two runners never dial a contact twice, and the credits charged are the contacts dialed', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 60, { maxConcurrentCalls: 6, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    await addCredits(org, 1000);
    // On PostgreSQL the second runner has its own ORM and connection pool, as a second replica would.
    const replica = app.db.url ? await openDatabase({ databaseUrl: app.db.url, dataDir: 'memory://', migrate: false }) : null;
    const runners = [app.db.database.em, replica?.em ?? app.db.database.em].map(
      (em, index) =>
        testRunner(app, {
          em,
          dialer: new SimulatedDialer({ seed: `reserve-two-${index}`, speedMs: 3 }),
          logger: createLogger('warn', { write: (line: string) => void logs.push(JSON.parse(line)) }),
          intervalMs: 2,
          clock,
          simulatedSwitch: new SimulatedSwitch(),
        }),
    );
    for (const runner of runners) runner.start();
    let id = '';
    try {
      // Started once each runner has seen the other's heartbeat: runners take turns at an execution, and
      // one that does not know of the other yet claims alone (on a loaded machine, possibly all 60 calls).
      const ids = runners.map((runner) => runner.id);
      await waitFor(
        () => app.sql<{ n: number }>(`select count(*)::int as n from runner_heartbeats where id in (?, ?)`, ids),
        ([row]) => row!.n === 2,
      );
      await Promise.all(runners.map((runner) => runner.tick()));
      id = await startedExecution(org, programId);
      await poll(() => readExecution(org, programId, id), (execution) => execution.status === 'completed', 20_000);
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
      await replica?.close();
    }
    const calls = await app.sql<{ execution_contact_id: string; credits_charged: number }>('select execution_contact_id, credits_charged from calls where execution_id = ?', [id]);
    expect(calls).toHaveLength(60);
    expect(new Set(calls.map((call) => call.execution_contact_id)).size).toBe(60);
    const byRunner = await app.sql<{ runner: string; n: number }>(
      `select split_part(claim_token, '#', 1) as runner, count(*)::int as n from calls where execution_id = ? group by 1`,
      [id],
    );
    expect(byRunner).toHaveLength(2);
    const end = await org.rest.get(`/api/executions/${id}`);
    expect(end.body.creditsSpent).toBe(60);
    expect(await ledgerSpent(org, id)).toBe(-60);
    expect(await credits(org)).toEqual({ creditBalance: 940, creditsReserved: 0 });
  });
});
