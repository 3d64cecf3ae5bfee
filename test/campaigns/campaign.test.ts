import { isFinalOutcome, type CallOutcome } from '../../src/modules/programs/runner/dialer.js';
import type { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import {
  CampaignCreditsDocument,
  CampaignExecutionDocument,
  CampaignExecutionsDocument,
  CancelExecutionDocument,
  ControlExecutionDocument,
  PauseExecutionDocument,
  CreateExecutionDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import {
  ALWAYS_ANSWERED,
  addCredits,
  buildCampaign,
  buildRunner,
  creditBalance,
  loggedErrors,
  logs,
  poll,
  readExecution,
  sleep,
  tickUntil,
  type Counters,
} from './fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(loggedErrors()).toEqual([]);
  logs.length = 0;
});

/** The calls the seeded dialer will make for one contact under maxAttempts. */
function callsFor(dialer: SimulatedDialer, phone: string, maxAttempts: number): CallOutcome[] {
  const outcomes: CallOutcome[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    outcomes.push(dialer.outcomeOf(phone, attempt));
    if (isFinalOutcome(outcomes.at(-1)!)) break;
  }
  return outcomes;
}

it('runs a campaign built through the doors to completed, the counters adding up after every tick', async () => {
  const org = await app.organization('Acme');
  const { contacts, programId } = await buildCampaign(org, 12);
  expect(await addCredits(org, 100)).toBe(100);

  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ status: 'scheduled', totalContacts: 12, contactsPending: 12, actualStartAt: null });
  const id: string = created.body.id;
  const started = await org.rest.post(`/api/executions/${id}/start`);
  expect([started.status, started.body.status]).toEqual([200, 'running']);

  // Calls long enough that a read right after a tick sees them in progress (5 ms calls often ended first: flaky).
  const { runner, dialer } = buildRunner(app, { seed: 'e2e-campaign', speedMs: 50 });
  const seen: Counters[] = [];
  const end = await tickUntil(runner, () => readExecution(org, programId, id), (execution) => execution.status === 'completed', (execution) => {
    expect(execution.totalContacts).toBe(12);
    expect(execution.contactsInProgress).toBeLessThanOrEqual(3);
    seen.push(execution);
  });
  await runner.idle();

  expect(seen.some((execution) => execution.contactsInProgress > 0)).toBe(true);
  expect(seen.length).toBeGreaterThan(2);
  expect(end.actualEndAt).not.toBeNull();
  expect(Date.parse(end.actualEndAt!)).toBeGreaterThanOrEqual(Date.parse(end.actualStartAt!));
  expect(end.contactsCompleted + end.contactsFailed).toBe(12);

  // What the seeded dialer decides, phone by phone, is what the doors report.
  const expected = contacts.map((contact) => callsFor(dialer, contact.phone, 2));
  const placed = expected.reduce((sum, calls) => sum + calls.length, 0);
  expect(placed).toBeGreaterThan(12); // some contacts were retried
  expect(end.contactsCompleted).toBe(expected.filter((calls) => isFinalOutcome(calls.at(-1)!)).length);
  const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
  expect(execution).toMatchObject({ status: 'completed', creditsSpent: placed, contactsCompleted: end.contactsCompleted, contactsFailed: end.contactsFailed });
  expect(await creditBalance(org)).toBe(100 - placed);
  expect((await org.graphql.ok(CampaignCreditsDocument)).organization.creditBalance).toBe(100 - placed);
  // Completed is final: another tick dials nobody.
  await runner.tick();
  expect(await creditBalance(org)).toBe(100 - placed);
});

describe('control through both doors while the runner runs', () => {
  const ACTIONS = ['start', 'pause', 'resume', 'stop', 'cancel'] as const;

  async function refusesEveryMove(org: TestOrganization, id: string) {
    for (const action of ACTIONS) {
      const rest = await org.rest.post(`/api/executions/${id}/${action}`);
      expect([action, rest.status, rest.body.code]).toEqual([action, 409, 'CONFLICT']);
      const graphql = await org.graphql.run(ControlExecutionDocument, { id, action });
      expect([action, graphql.errors?.[0]?.extensions.code]).toEqual([action, 'CONFLICT']);
    }
  }

  it('pause stops new calls (only the call in flight ends), resume runs to completed; then every move is refused', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 30, { maxConcurrentCalls: 1 });
    await addCredits(org, 100);
    const id: string = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id;
    expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
    const read = () => readExecution(org, programId, id);

    const { runner } = buildRunner(app, { seed: 'e2e-control', speedMs: 5, weights: ALWAYS_ANSWERED });
    runner.start();
    try {
      await poll(read, (execution) => execution.contactsCompleted >= 3);
      const { pauseExecution } = await org.graphql.ok(PauseExecutionDocument, { id });
      expect(pauseExecution.status).toBe('paused');
      const atPause = await read();
      // The call in flight (at most one) is recorded; then nothing moves while the runner keeps ticking.
      const settled = await poll(read, (execution) => execution.contactsInProgress === 0);
      expect(settled.contactsCompleted).toBeLessThanOrEqual(atPause.contactsCompleted + atPause.contactsInProgress);
      await sleep(150);
      const still = await read();
      expect(still).toEqual(settled);
      expect(still).toMatchObject({ status: 'paused', contactsPending: 30 - still.contactsCompleted });
      expect(still.contactsPending).toBeGreaterThan(0);
      const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
      expect(execution).toMatchObject({ status: 'paused', creditsSpent: still.contactsCompleted });
      expect(await creditBalance(org)).toBe(100 - still.contactsCompleted);

      const resumed = await org.rest.post(`/api/executions/${id}/resume`);
      expect([resumed.status, resumed.body.status]).toEqual([200, 'running']);
      const end = await poll(read, (each) => each.status !== 'running');
      expect(end).toMatchObject({ status: 'completed', contactsCompleted: 30, contactsFailed: 0, contactsPending: 0, contactsInProgress: 0 });
    } finally {
      await runner.stop();
    }
    expect(await creditBalance(org)).toBe(70);
    await refusesEveryMove(org, id);
  });

  it('a cancelled scheduled execution cannot start; a stop is final: no more calls, every move refused on both doors', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 20, { maxConcurrentCalls: 1 });
    await addCredits(org, 100);
    const cancelledId: string = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id;
    const cancelled = await org.rest.post(`/api/executions/${cancelledId}/cancel`);
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
    expect((await org.rest.post(`/api/executions/${cancelledId}/start`)).status).toBe(409);
    expect((await org.graphql.run(CreateExecutionDocument, { programId })).errors).toBeUndefined();
    const secondId = (await org.graphql.ok(CampaignExecutionsDocument, { programId })).executions[0]!.id;
    const { cancelExecution } = await org.graphql.ok(CancelExecutionDocument, { id: secondId });
    expect(cancelExecution.status).toBe('cancelled');
    expect((await org.graphql.run(ControlExecutionDocument, { id: secondId, action: 'start' })).errors?.[0]?.extensions.code).toBe('CONFLICT');

    const id: string = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id;
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'e2e-stop', speedMs: 5 });
    runner.start();
    try {
      expect((await org.graphql.ok(ControlExecutionDocument, { id, action: 'start' })).controlExecution.status).toBe('running');
      await poll(read, (execution) => execution.contactsCompleted + execution.contactsFailed >= 3);
      const stopped = await org.rest.post(`/api/executions/${id}/stop`);
      expect([stopped.status, stopped.body.status]).toEqual([200, 'stopped']);
      expect(stopped.body.actualEndAt).not.toBeNull();
      const settled = await poll(read, (execution) => execution.contactsInProgress === 0);
      await sleep(150);
      expect(await read()).toEqual(settled);
      expect(settled.status).toBe('stopped');
      expect(settled.contactsPending).toBeGreaterThan(0);
    } finally {
      await runner.stop();
    }
    await refusesEveryMove(org, id);
    // No cancelled execution was ever dialed.
    for (const each of (await org.graphql.ok(CampaignExecutionsDocument, { programId })).executions.filter((execution) => execution.id !== id)) {
      expect(each).toMatchObject({ status: 'cancelled', creditsSpent: 0, contactsPending: 20, actualStartAt: null });
    }
    const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
    expect(await creditBalance(org)).toBe(100 - execution!.creditsSpent);
  });
});
