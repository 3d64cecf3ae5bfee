import { createLogger } from '../../src/common/logger.js';
import { openDatabase } from '../../src/db/orm.js';
import { testRunner, ticks } from '../runner/fixtures.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { SimulatedSwitch } from '../../src/modules/programs/runner/simulated-carrier.js';
import { CampaignCreditsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import {
  activeProgram,
  addCredits,
  ALWAYS_ANSWERED,
  buildCampaign,
  buildRunner,
  clock,
  loggedErrors,
  logs,
  poll,
  readExecution,
  tickUntil,
} from './fixtures.js';

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
  return (ledger.body.data as { amount: number; executionId: string }[])
    .filter((entry) => entry.executionId === executionId)
    .reduce((sum, entry) => sum + entry.amount, 0);
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
      await ticks(runner, 2);
    } finally {
      await runner.stop();
    }
    const end = await org.rest
      .get(`/api/executions/${id}`)
      .then((res) => res.body as { creditsSpent: number; contactsCompleted: number; contactsFailed: number });
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
    // And says so: it waits for credits (another runner holds them).
    expect((await org.rest.get(`/api/executions/${id}`)).body).toMatchObject({ status: 'running', waitingReason: 'no_credits', nextCallAt: null });

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
    const runners = [app.db.database.em, replica?.em ?? app.db.database.em].map((em, index) =>
      testRunner(app, {
        em,
        dialer: new SimulatedDialer({ seed: `reserve-two-${index}`, speedMs: 3 }),
        logger: createLogger('warn', { write: (line: string) => void logs.push(JSON.parse(line)) }),
        clock,
        simulatedSwitch: new SimulatedSwitch(),
      }),
    );
    // Driven by hand, so the interleaving is the test's, not the scheduler's (two started runners take
    // turns by the clock, and a loaded machine gave one of them all 60 calls): each holds a reservation
    // of its own from its first claim on; then they tick at once, their claims racing for the same rows.
    const id = await startedExecution(org, programId);
    const read = () => readExecution(org, programId, id);
    try {
      for (const runner of runners) {
        await runner.tick();
        await runner.idle();
      }
      const holders = await app.sql<{ runner_id: string }>('select runner_id from credit_reservations where execution_id = ? order by runner_id', [id]);
      expect(holders.map((row) => row.runner_id)).toEqual(runners.map((runner) => runner.id).sort());
      for (let round = 0; round < 60 && (await read()).status !== 'completed'; round++) {
        await Promise.all(runners.map((runner) => runner.tick()));
        await Promise.all(runners.map((runner) => runner.idle()));
      }
      expect((await read()).status).toBe('completed');
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
      await replica?.close();
    }
    const calls = await app.sql<{ execution_contact_id: string; credits_charged: number }>(
      'select execution_contact_id, credits_charged from calls where execution_id = ?',
      [id],
    );
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

  it('a call that fails before a word is said on it (its agent archived since the claim) costs no credit; one that fails after the greeting keeps its credit', async () => {
    const org = await app.organization();
    const { programId, flowId } = await buildCampaign(org, 2, { maxConcurrentCalls: 2, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    await addCredits(org, 10);
    // Archived behind the doors' back, as a delete racing the claim would leave it (the doors refuse to delete an agent in use).
    const [{ nodes }] = await app.sql<{ nodes: { agentId: string | null }[] }>('select nodes from call_flows where id = ?', [flowId]);
    await app.sql(`update agents set status = 'archived', deleted_at = now() where id = ?`, [nodes[0]!.agentId]);
    const id = await startedExecution(org, programId);
    // Talked through the voice engine (its simulated caller), as the served runner talks simulated calls.
    const talking = (seed: string) =>
      testRunner(app, {
        dialer: new SimulatedDialer({ seed, speedMs: 0, weights: ALWAYS_ANSWERED }),
        conversations: app.gateway.services.conversations,
        logger: createLogger('warn', { write: (line: string) => void logs.push(JSON.parse(line)) }),
        clock,
      });
    const runner = talking('archived-agent');
    await tickUntil(
      runner,
      () => readExecution(org, programId, id),
      (execution) => execution.status === 'completed',
    );
    const calls = (await org.rest.get(`/api/calls?executionId=${id}`)).body.data as {
      status: string;
      outcome: string;
      creditsCharged: number;
      errorText: string;
    }[];
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({ status: 'failed', outcome: 'failed', creditsCharged: 0 });
      expect(call.errorText).toMatch(/^The call’s agent "Caller" \([0-9a-f-]{36}\) is archived$/);
    }
    expect((await org.rest.get(`/api/executions/${id}`)).body).toMatchObject({ status: 'completed', contactsFailed: 2, creditsSpent: 0 });
    expect(await credits(org)).toEqual({ creditBalance: 10, creditsReserved: 0 });
    const ledger = (await org.rest.get('/api/organization/credit-ledger?limit=100')).body.data as { kind: string; amount: number; executionId: string }[];
    const mine = ledger.filter((entry) => entry.executionId === id);
    expect(mine.filter((entry) => entry.kind === 'refund').map((entry) => entry.amount)).toEqual([1, 1]);
    expect(mine.reduce((sum, entry) => sum + entry.amount, 0)).toBe(0);

    // The greeting said, the agent's provider gone since activation (its key removed): the call failed on our side, but it was a call.
    const agent = await org.rest.post('/api/agents', { name: 'Greeter', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' } });
    expect((await org.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    const audienceId = (await org.rest.get(`/api/programs/${programId}`)).body.audience.id;
    const spoken = await activeProgram(org, '', audienceId, {
      flowId: undefined,
      agentId: agent.body.id,
      retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
    });
    await app.sql(`update agents set model_config = jsonb_set(model_config, '{model}', '"openai/gpt-4o-mini"') where id = ?`, [agent.body.id]);
    const second = await startedExecution(org, spoken);
    await tickUntil(
      talking('spoken-agent'),
      () => readExecution(org, spoken, second),
      (execution) => execution.status === 'completed',
    );
    const failed = (await org.rest.get(`/api/calls?executionId=${second}`)).body.data as { status: string; creditsCharged: number; errorText: string }[];
    expect(failed.map((call) => [call.status, call.creditsCharged])).toEqual([
      ['failed', 1],
      ['failed', 1],
    ]);
    expect(failed[0]!.errorText).toMatch(/^The agent could not answer: .*OPENAI_API_KEY/);
    expect((await org.rest.get(`/api/executions/${second}`)).body).toMatchObject({ creditsSpent: 2 });
    expect(await credits(org)).toEqual({ creditBalance: 8, creditsReserved: 0 });
  });
});
