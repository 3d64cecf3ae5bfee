import { type Dialer, isFinalOutcome } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import {
  ActivateProgramDocument,
  AudienceDocument,
  CallFlowDocument,
  CampaignCreditsDocument,
  CampaignExecutionDocument,
  CampaignExecutionsDocument,
  CancelExecutionDocument,
  ControlExecutionDocument,
  CreateExecutionDocument,
  CreateProgramDocument,
  CreditLedgerDocument,
  DeleteCallFlowDocument,
  DeleteProgramDocument,
  ExecutionsDocument,
  ExecutionWaitingDocument,
  ProgramExecutionsWaitingDocument,
  ProgramNestedExecutionsWaitingDocument,
  PauseExecutionDocument,
  ProgramDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
  StopExecutionDocument,
  SyncProgramTriggersDocument,
  TriggersDocument,
  UpdateCallFlowDocument,
  UpdateProgramDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import {
  addCredits,
  ALL_DAY,
  ALWAYS_ANSWERED,
  buildCampaign,
  buildRunner,
  clock,
  type Counters,
  createAudience,
  createFlow,
  creditBalance,
  importContacts,
  loggedErrors,
  logs,
  poll,
  readExecution,
  tickUntil,
} from './fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { expectedCalls, testRunner, ticks } from '../runner/fixtures.js';

// Campaigns: runs, isolation, live programs, pauses, semantics and transition logs, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('campaign', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

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
    const end = await tickUntil(
      runner,
      () => readExecution(org, programId, id),
      (execution) => execution.status === 'completed',
      (execution) => {
        expect(execution.totalContacts).toBe(12);
        expect(execution.contactsInProgress).toBeLessThanOrEqual(3);
        seen.push(execution);
      },
    );
    await runner.idle();

    expect(seen.some((execution) => execution.contactsInProgress > 0)).toBe(true);
    expect(seen.length).toBeGreaterThan(2);
    expect(end.actualEndAt).not.toBeNull();
    expect(Date.parse(end.actualEndAt!)).toBeGreaterThanOrEqual(Date.parse(end.actualStartAt!));
    expect(end.contactsCompleted + end.contactsFailed).toBe(12);

    // What the seeded dialer decides, phone by phone, is what the doors report.
    const expected = contacts.map((contact) => expectedCalls(dialer, contact.phone, 2));
    const placed = expected.reduce((sum, calls) => sum + calls.length, 0);
    expect(placed).toBeGreaterThan(12); // some contacts were retried
    expect(end.contactsCompleted).toBe(expected.filter((calls) => isFinalOutcome(calls.at(-1)!)).length);
    const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
    expect(execution).toMatchObject({
      status: 'completed',
      creditsSpent: placed,
      contactsCompleted: end.contactsCompleted,
      contactsFailed: end.contactsFailed,
    });
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
        await ticks(runner, 5);
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

    it('a refused move says which to make: cancel on a running execution names stop, with its route and mutation, the same on both doors', async () => {
      const org = await app.organization();
      const { programId } = await buildCampaign(org, 1);
      await addCredits(org, 1);
      const id: string = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id;
      expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
      const rest = await org.rest.post(`/api/executions/${id}/cancel`);
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toBe(
        'An execution that is running cannot be cancelled: only a preparing or scheduled one (that has not started) can. ' +
          `Use stop (POST /api/executions/${id}/stop, GraphQL stopExecution) or pause (POST /api/executions/${id}/pause, GraphQL pauseExecution)`,
      );
      for (const graphql of [
        await org.graphql.run(CancelExecutionDocument, { id }),
        await org.graphql.run(ControlExecutionDocument, { id, action: 'cancel' }),
      ]) {
        expect([graphql.errors?.[0]?.extensions.code, graphql.errors?.[0]?.message]).toEqual(['CONFLICT', rest.body.detail]);
      }
      // The verb it names works; another organization gets 404 on both doors.
      const other = await app.organization();
      expect((await other.rest.post(`/api/executions/${id}/stop`)).status).toBe(404);
      expect((await other.graphql.run(StopExecutionDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      expect((await org.rest.post(`/api/executions/${id}/stop`)).body.status).toBe('stopped');
      expect((await org.rest.post(`/api/executions/${id}/stop`)).body.detail).toBe(
        'An execution that is stopped cannot be stopped: only a running or paused one can. stopped is final: nothing moves it',
      );
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
        await ticks(runner, 5);
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
});

describe('isolation', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

  it('another organization gets 404 NOT_FOUND on every campaign route and operation of the first, on both doors, while its campaign runs', async () => {
    const acme = await app.organization('Acme');
    const other = await app.organization('Other');
    const { programId, flowId, audienceId, contacts } = await buildCampaign(acme, 6, { maxConcurrentCalls: 1 });
    await addCredits(acme, 20);
    const live = await acme.rest.post('/api/programs', {
      name: 'Live',
      kind: 'live',
      flowId,
      audienceId,
      callingWindow: ALL_DAY,
      liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: 0, timeOfDay: '09:00' },
    });
    expect(live.status).toBe(201);
    await acme.rest.post(`/api/programs/${live.body.id}/activate`);
    const id: string = (await acme.rest.post(`/api/programs/${programId}/executions`)).body.id;
    expect((await acme.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
    // The other organization has contacts of its own and no credits.
    await importContacts(other, 2);

    const { runner } = buildRunner(app, { seed: 'e2e-isolation', weights: ALWAYS_ANSWERED });
    await runner.tick();

    const rest: [string, string, unknown?][] = [
      ['GET', `/api/programs/${programId}`],
      ['PUT', `/api/programs/${programId}`, { name: 'Taken' }],
      ['DELETE', `/api/programs/${programId}`],
      ['POST', `/api/programs/${programId}/activate`],
      ['GET', `/api/programs/${programId}/executions`],
      ['POST', `/api/programs/${programId}/executions`],
      ['GET', `/api/programs/${live.body.id}/triggers`],
      ['GET', `/api/programs/${live.body.id}/triggers?status=pending`],
      ['POST', `/api/programs/${live.body.id}/triggers/sync`],
      ['GET', `/api/executions/${id}`],
      ...['start', 'pause', 'resume', 'stop', 'cancel'].map((action): [string, string] => ['POST', `/api/executions/${id}/${action}`]),
      ['GET', `/api/call-flows/${flowId}`],
      ['PUT', `/api/call-flows/${flowId}`, { name: 'Taken' }],
      ['DELETE', `/api/call-flows/${flowId}`],
      ['GET', `/api/audience/${audienceId}`],
      ['GET', `/api/contacts/${contacts[0]!.id}`],
    ];
    for (const [method, path, body] of rest) {
      const res = await other.rest.request(method, path, body);
      expect([method, path, res.status, res.body?.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }

    const graphql = [
      other.graphql.run(ProgramDocument, { id: programId }),
      other.graphql.run(UpdateProgramDocument, { id: programId, input: { name: 'Taken' } }),
      other.graphql.run(DeleteProgramDocument, { id: programId }),
      other.graphql.run(ActivateProgramDocument, { id: programId }),
      other.graphql.run(ExecutionsDocument, { programId }),
      other.graphql.run(CreateExecutionDocument, { programId }),
      other.graphql.run(TriggersDocument, { programId: live.body.id }),
      other.graphql.run(SyncProgramTriggersDocument, { programId: live.body.id }),
      other.graphql.run(CampaignExecutionDocument, { id }),
      ...(['start', 'pause', 'resume', 'stop', 'cancel'] as const).map((action) => other.graphql.run(ControlExecutionDocument, { id, action })),
      other.graphql.run(PauseExecutionDocument, { id }),
      other.graphql.run(ResumeExecutionDocument, { id }),
      other.graphql.run(StopExecutionDocument, { id }),
      other.graphql.run(CancelExecutionDocument, { id }),
      other.graphql.run(StartExecutionDocument, { id }),
      other.graphql.run(CallFlowDocument, { id: flowId }),
      other.graphql.run(UpdateCallFlowDocument, { id: flowId, input: { name: 'Taken' } }),
      other.graphql.run(DeleteCallFlowDocument, { id: flowId }),
      other.graphql.run(AudienceDocument, { id: audienceId }),
    ];
    for (const [index, result] of (await Promise.all(graphql)).entries()) {
      expect([index, result.errors?.[0]?.extensions.code]).toEqual([index, 'NOT_FOUND']);
    }
    // Nor do the lists show them.
    expect((await other.rest.get('/api/programs')).body.data).toEqual([]);
    expect((await other.rest.get('/api/call-flows')).body.data).toEqual([]);

    // Untouched: acme's campaign runs on to completed, on acme's credits only.
    expect((await acme.rest.get(`/api/programs/${programId}`)).body).toMatchObject({ name: expect.stringMatching(/^Program /), status: 'active' });
    expect((await acme.rest.get(`/api/call-flows/${flowId}`)).body.name).toBe('Greeting');
    const end = await tickUntil(
      runner,
      () => readExecution(acme, programId, id),
      (execution) => execution.status === 'completed',
    );
    expect(end.contactsCompleted).toBe(6);
    expect(await creditBalance(acme)).toBe(14);
    expect(await creditBalance(other)).toBe(0);
  });
});

describe('live', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

  const DAY = 86_400_000;
  const dateOf = (instant: number) => new Date(instant).toISOString().slice(0, 10);

  it('a live program: activation makes pending triggers, the runner fires the due ones into an execution and dials it to completed; an opt-out cancels', async () => {
    const org = await app.organization();
    await addCredits(org, 50);
    // Ten days ahead, so activation (on the real clock) finds every date still to come; the runner's clock then moves past it.
    const birthday = dateOf(Date.now() + 10 * DAY);
    const later = dateOf(Date.now() + 30 * DAY);
    const zones = ['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Europe/Paris', 'America/New_York'];
    const contacts = await importContacts(org, 5, (i) => ({ timeZone: zones[i], attributes: { birthday: i === 3 ? later : birthday } }));
    const [paris, newYork, tokyo, notYet, quitter] = contacts;
    const audienceId = await createAudience(
      org,
      contacts.map((contact) => contact.id),
    );
    const flowId = await createFlow(org);

    const { createProgram } = await org.graphql.ok(CreateProgramDocument, {
      input: {
        name: 'Birthday calls',
        kind: 'live',
        flowId,
        audienceId,
        callingWindow: ALL_DAY,
        maxConcurrentCalls: 2,
        retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 },
        liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: 0, timeOfDay: '09:00' },
      },
    });
    const programId = createProgram.id;
    expect((await org.rest.get(`/api/programs/${programId}/triggers`)).body).toEqual([]);
    expect((await org.graphql.ok(ActivateProgramDocument, { id: programId })).activateProgram.status).toBe('active');

    const pending = await org.rest.get(`/api/programs/${programId}/triggers?status=pending`);
    expect(pending.status).toBe(200);
    const triggerAt = Object.fromEntries(pending.body.map((trigger: { contactId: string; triggerAt: string }) => [trigger.contactId, trigger.triggerAt]));
    // 09:00 on the contact's own clock (summer or winter time alike: the offset is read for that day).
    const nineLocal = (zone: string, date: string) => {
      const guess = Date.parse(`${date}T09:00:00Z`);
      const local = new Date(new Date(guess).toLocaleString('en-US', { timeZone: zone }) + ' UTC').getTime();
      return new Date(guess - (local - guess)).toISOString();
    };
    expect(triggerAt).toEqual({
      [paris!.id]: nineLocal('Europe/Paris', birthday),
      [newYork!.id]: nineLocal('America/New_York', birthday),
      [tokyo!.id]: nineLocal('Asia/Tokyo', birthday),
      [notYet!.id]: nineLocal('Europe/Paris', later),
      [quitter!.id]: nineLocal('America/New_York', birthday),
    });
    expect((await org.rest.get(`/api/programs/${programId}/executions`)).body).toEqual([]);

    // Opting out cancels the contact's pending trigger at once.
    expect((await org.rest.put(`/api/contacts/${quitter!.id}`, { optedOut: true })).status).toBe(200);
    const cancelled = await org.rest.get(`/api/programs/${programId}/triggers?status=cancelled`);
    expect(cancelled.body.map((trigger: { contactId: string }) => trigger.contactId)).toEqual([quitter!.id]);
    expect((await org.graphql.ok(TriggersDocument, { programId, status: 'cancelled' })).triggers.map((trigger) => trigger.contactId)).toEqual([quitter!.id]);

    // The runner's clock: noon UTC the day after the birthday, inside every contact's window.
    let now = new Date(`${dateOf(Date.parse(birthday) + DAY)}T12:00:00Z`);
    const { runner } = buildRunner(app, { seed: 'e2e-live', weights: ALWAYS_ANSWERED }, () => now);
    await runner.tick();
    const triggered = await org.rest.get(`/api/programs/${programId}/triggers?status=triggered`);
    expect(triggered.body.map((trigger: { contactId: string }) => trigger.contactId).sort()).toEqual([paris!.id, newYork!.id, tokyo!.id].sort());
    expect(triggered.body.every((trigger: { triggeredAt: string }) => trigger.triggeredAt === now.toISOString())).toBe(true);
    const stillPending = await org.graphql.ok(TriggersDocument, { programId, status: 'pending' });
    expect(stillPending.triggers.map((trigger) => [trigger.contactId, trigger.triggeredAt])).toEqual([[notYet!.id, null]]);

    const listed = await org.rest.get(`/api/programs/${programId}/executions`);
    expect(listed.body).toHaveLength(1);
    const live = listed.body[0];
    expect(live).toMatchObject({ programId, status: 'running', totalContacts: 3, contactsPending: 3, actualStartAt: now.toISOString() });
    // The events: one trigger.fired per fired trigger, naming the execution it queued into, which a trigger opened.
    const fired = (await org.rest.get('/api/events?type=trigger.fired&limit=100')).body.data as { payload: Record<string, unknown> }[];
    expect(fired.map((event) => event.payload.contactId).sort()).toEqual([paris!.id, newYork!.id, tokyo!.id].sort());
    expect(fired.every((event) => event.payload.executionId === live.id && event.payload.programId === programId && event.payload.status === 'triggered')).toBe(
      true,
    );
    const opened = (await org.rest.get('/api/events?type=execution.created')).body.data as { payload: Record<string, unknown> }[];
    expect(opened.map((event) => [event.payload.id, event.payload.from, event.payload.to, event.payload.reason])).toEqual([
      [live.id, null, 'running', 'trigger'],
    ]);

    const end = await tickUntil(
      runner,
      () => readExecution(org, programId, live.id),
      (execution) => execution.status === 'completed',
    );
    expect(end).toMatchObject({ totalContacts: 3, contactsCompleted: 3, contactsFailed: 0, actualEndAt: now.toISOString() });
    expect((await org.graphql.ok(CampaignExecutionDocument, { id: live.id })).execution?.creditsSpent).toBe(3);
    expect(await creditBalance(org)).toBe(47);
    // Fired triggers do not fire twice, and the opted-out contact was never queued.
    await runner.tick();
    expect((await org.rest.get(`/api/programs/${programId}/executions`)).body.map((each: { totalContacts: number }) => each.totalContacts)).toEqual([3]);
    const statuses = (await org.rest.get(`/api/programs/${programId}/triggers`)).body.map((trigger: { contactId: string; status: string }) => [
      trigger.contactId,
      trigger.status,
    ]);
    expect(Object.fromEntries(statuses)).toEqual({
      [paris!.id]: 'triggered',
      [newYork!.id]: 'triggered',
      [tokyo!.id]: 'triggered',
      [notYet!.id]: 'pending',
      [quitter!.id]: 'cancelled',
    });

    // Twenty days on, the last birthday comes round: the first execution is over, so a new one opens for it.
    now = new Date(`${dateOf(Date.parse(later) + DAY)}T12:00:00Z`);
    await runner.tick();
    const both = (await org.rest.get(`/api/programs/${programId}/executions`)).body;
    expect(both.map((each: { id: string; totalContacts: number; status: string }) => [each.id === live.id, each.totalContacts, each.status])).toEqual([
      [false, 1, 'running'],
      [true, 3, 'completed'],
    ]);
    const next = await tickUntil(
      runner,
      () => readExecution(org, programId, both[0].id),
      (execution) => execution.status === 'completed',
    );
    expect(next).toMatchObject({ totalContacts: 1, contactsCompleted: 1 });
    expect(await creditBalance(org)).toBe(46);
    expect((await org.rest.get(`/api/programs/${programId}/triggers?status=pending`)).body).toEqual([]);
  });
});

describe('pauses', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

  async function runningExecution(org: TestOrganization, programId: string): Promise<string> {
    const created = await org.rest.post(`/api/programs/${programId}/executions`);
    expect(created.status).toBe(201);
    expect((await org.rest.post(`/api/executions/${created.body.id}/start`)).body.status).toBe('running');
    return created.body.id;
  }

  /** Ticks that change nothing: the paused execution is left alone. */
  async function expectIdle(runner: ReturnType<typeof buildRunner>['runner'], read: () => Promise<unknown>) {
    const before = await read();
    for (let i = 0; i < 3; i++) {
      await runner.tick();
      await runner.idle();
    }
    expect(await read()).toEqual(before);
  }

  it('credits: fewer credits than contacts → paused_no_credits on both doors; more credits and a resume complete it', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 10, { maxConcurrentCalls: 2 });
    expect(await creditBalance(org)).toBe(0);
    await addCredits(org, 4);
    const id = await runningExecution(org, programId);
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'e2e-credits', weights: ALWAYS_ANSWERED });

    const paused = await tickUntil(runner, read, (execution) => execution.status === 'paused_no_credits' && execution.contactsInProgress === 0);
    expect(paused).toMatchObject({ contactsCompleted: 4, contactsPending: 6, contactsFailed: 0 });
    const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
    expect(execution).toMatchObject({ status: 'paused_no_credits', creditsSpent: 4, contactsPending: 6 });
    expect(await creditBalance(org)).toBe(0);
    await expectIdle(runner, read);

    // A resume with no credits is refused (it would only pause again at once): the semantics describe.
    expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(409);
    expect(await read()).toMatchObject({ status: 'paused_no_credits', contactsCompleted: 4, contactsPending: 6 });

    expect(await addCredits(org, 10)).toBe(10);
    expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
    const end = await tickUntil(runner, read, (each) => each.status === 'completed');
    expect(end).toMatchObject({ contactsCompleted: 10, contactsPending: 0, contactsInProgress: 0 });
    expect(end.actualEndAt).not.toBeNull();
    expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.creditsSpent).toBe(10);
    expect(await creditBalance(org)).toBe(4);

    // The ledger has both grants and every credit the runner took, for this execution, on both doors.
    const ledger = await org.rest.get('/api/organization/credit-ledger?limit=100');
    expect(ledger.status).toBe(200);
    const entries = ledger.body.data as { kind: string; amount: number; balanceAfter: number; executionId: string | null }[];
    expect(entries.filter((entry) => entry.kind === 'grant').map((entry) => entry.amount)).toEqual([10, 4]);
    const spends = entries.filter((entry) => entry.kind === 'spend');
    expect(spends.reduce((sum, entry) => sum + entry.amount, 0)).toBe(-10);
    expect(spends.every((entry) => entry.executionId === id && entry.amount < 0)).toBe(true);
    expect(Math.min(...spends.map((entry) => entry.balanceAfter))).toBe(0);
    const { creditLedger } = await org.graphql.ok(CreditLedgerDocument, { limit: 100 });
    expect(creditLedger).toEqual(ledger.body);
  });

  it('threshold: paused_threshold once two contacts reached "say"; each resume restarts the count', async () => {
    const org = await app.organization();
    const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
    const { programId } = await buildCampaign(org, 5, { maxConcurrentCalls: 1, autoPauseRules: [rule] });
    await addCredits(org, 50);
    const id = await runningExecution(org, programId);
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'e2e-threshold', weights: ALWAYS_ANSWERED });

    const first = await tickUntil(runner, read, (execution) => execution.status === 'paused_threshold');
    expect(first).toMatchObject({ contactsCompleted: 2, contactsPending: 3, contactsInProgress: 0 });
    expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.status).toBe('paused_threshold');
    await expectIdle(runner, read);
    // paused_threshold is already a pause: pausing again is refused.
    expect((await org.rest.post(`/api/executions/${id}/pause`)).status).toBe(409);

    expect((await org.rest.post(`/api/executions/${id}/resume`)).body.status).toBe('running');
    const second = await tickUntil(runner, read, (execution) => execution.status !== 'running');
    expect(second).toMatchObject({ status: 'paused_threshold', contactsCompleted: 4, contactsPending: 1 });

    expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
    // The last contact reaches "say" once: below the threshold, and nothing is left, so completed.
    const end = await tickUntil(runner, read, (execution) => execution.status !== 'running');
    expect(end).toMatchObject({ status: 'completed', contactsCompleted: 5, contactsPending: 0 });
    expect(await creditBalance(org)).toBe(45);
  });

  it('threshold without resetOnResume: the count goes on, so the next contact at the node pauses again', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 6, { maxConcurrentCalls: 1, autoPauseRules: [{ nodeId: 'say', threshold: 2, resetOnResume: false }] });
    await addCredits(org, 50);
    const id = await runningExecution(org, programId);
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'e2e-threshold-2', weights: ALWAYS_ANSWERED });
    await tickUntil(runner, read, (execution) => execution.status === 'paused_threshold');
    await org.rest.post(`/api/executions/${id}/resume`);
    const again = await tickUntil(runner, read, (execution) => execution.status !== 'running');
    expect(again).toMatchObject({ status: 'paused_threshold', contactsCompleted: 3, contactsPending: 3 });
  });
});

describe('semantics', () => {
  // The campaign semantics docs/campaigns.md › "Campaign semantics" writes down, each on both doors.

  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(loggedErrors()).toEqual([]);
    logs.length = 0;
  });

  async function scheduledExecution(org: TestOrganization, programId: string): Promise<string> {
    const created = await org.rest.post(`/api/programs/${programId}/executions`);
    expect([created.status, created.body.status]).toEqual([201, 'scheduled']);
    return created.body.id;
  }

  async function expectNoCreditConflict(org: TestOrganization, id: string, action: 'start' | 'resume', waiting: number) {
    const rest = await org.rest.post(`/api/executions/${id}/${action}`);
    expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
    expect(rest.body.detail).toContain(`has 0 credits`);
    expect(rest.body.detail).toContain(`${waiting} contact`);
    expect(rest.body.detail).toContain('npm run cli -- credits:add');
    const graphql = action === 'start' ? await org.graphql.run(StartExecutionDocument, { id }) : await org.graphql.run(ResumeExecutionDocument, { id });
    expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
  }

  it('a new organization has 0 credits: starting an execution then answers 409 naming the missing credits, on both doors, and changes nothing', async () => {
    const org = await app.organization();
    expect(await creditBalance(org)).toBe(0);
    expect((await org.graphql.ok(CampaignCreditsDocument)).organization.creditBalance).toBe(0);
    const { programId } = await buildCampaign(org, 3);
    const id = await scheduledExecution(org, programId);

    await expectNoCreditConflict(org, id, 'start', 3);
    expect(await readExecution(org, programId, id)).toMatchObject({ status: 'scheduled', contactsPending: 3, actualStartAt: null });
    expect((await org.rest.get('/api/organization/credit-ledger')).body.data).toEqual([]);

    // Another organization sees no such execution, credits or not.
    const other = await app.organization();
    await other.grantCredits(5);
    expect((await other.rest.post(`/api/executions/${id}/start`)).status).toBe(404);
    expect((await other.graphql.run(StartExecutionDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');

    // One credit is enough to start: the runner pauses it when the credits run out.
    await org.grantCredits(1);
    expect((await org.graphql.ok(StartExecutionDocument, { id })).startExecution.status).toBe('running');
  });

  it('an execution with nobody to call starts with 0 credits and completes without a call', async () => {
    const org = await app.organization();
    const { programId, contacts } = await buildCampaign(org, 1);
    await org.rest.put(`/api/contacts/${contacts[0]!.id}`, { optedOut: true });
    const id = await scheduledExecution(org, programId);
    expect(await readExecution(org, programId, id)).toMatchObject({ totalContacts: 0 });
    expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
    const { runner } = buildRunner(app, { seed: 'semantics-empty' });
    expect(
      await tickUntil(
        runner,
        () => readExecution(org, programId, id),
        (each) => each.status !== 'running',
      ),
    ).toMatchObject({ status: 'completed' });
  });

  it('paused_no_credits stays paused when credits arrive; a resume without credits is 409 on both doors, with credits it runs to completed', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 4, { maxConcurrentCalls: 1 });
    await addCredits(org, 2);
    const id = await scheduledExecution(org, programId);
    expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'semantics-credits', weights: ALWAYS_ANSWERED });
    const paused = await tickUntil(runner, read, (each) => each.status === 'paused_no_credits' && each.contactsInProgress === 0);
    expect(paused).toMatchObject({ contactsCompleted: 2, contactsPending: 2 });

    await expectNoCreditConflict(org, id, 'resume', 2);
    expect((await read()).status).toBe('paused_no_credits');

    // Credits arriving do not resume it: a person decides when calling goes on.
    await addCredits(org, 5);
    for (let i = 0; i < 3; i++) {
      await runner.tick();
      await runner.idle();
    }
    expect(await read()).toMatchObject({ status: 'paused_no_credits', contactsCompleted: 2, contactsPending: 2 });
    expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.status).toBe('paused_no_credits');

    expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
    expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'completed', contactsCompleted: 4 });
    expect(await creditBalance(org)).toBe(3);
  });

  it('a user pause and resume does not restart a threshold count, even with resetOnResume; only a resume from paused_threshold does', async () => {
    const org = await app.organization();
    const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
    const { programId } = await buildCampaign(org, 6, { maxConcurrentCalls: 1, autoPauseRules: [rule] });
    await addCredits(org, 10);
    const id = await scheduledExecution(org, programId);
    await org.rest.post(`/api/executions/${id}/start`);
    const read = () => readExecution(org, programId, id);
    const { runner } = buildRunner(app, { seed: 'semantics-reset', weights: ALWAYS_ANSWERED });

    // One tick claims one call (one at a time); once it is recorded, one contact reached "say" and nothing is in flight.
    await runner.tick();
    await runner.idle();
    expect(await read()).toMatchObject({ status: 'running', contactsCompleted: 1, contactsInProgress: 0 });
    expect((await org.graphql.ok(PauseExecutionDocument, { id })).pauseExecution.status).toBe('paused');
    expect((await org.rest.post(`/api/executions/${id}/resume`)).body.status).toBe('running');
    // The count went on from 1: the second contact at "say" pauses it.
    expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'paused_threshold', contactsCompleted: 2 });

    // A resume from paused_threshold restarts the count: two more contacts before the next pause.
    expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
    expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'paused_threshold', contactsCompleted: 4 });
  });

  it('a call that does not connect reaches no node, whatever the dialer reports, so it never trips a rule', async () => {
    const org = await app.organization();
    const rule = { nodeId: 'start', threshold: 1, resetOnResume: false };
    const { programId } = await buildCampaign(org, 3, { maxConcurrentCalls: 1, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 }, autoPauseRules: [rule] });
    await addCredits(org, 10);
    const id = await scheduledExecution(org, programId);
    await org.rest.post(`/api/executions/${id}/start`);
    // A carrier that claims its unanswered calls walked the flow.
    const dialer: Dialer = { placeCall: async () => ({ outcome: 'no_answer', reachedNodeIds: ['start', 'say', 'end'], durationSeconds: 0 }) };
    const runner = testRunner(app, { dialer, logger: createLogger('warn'), intervalMs: 5, clock });
    const end = await tickUntil(
      runner,
      () => readExecution(org, programId, id),
      (each) => each.status !== 'running',
    );
    expect(end).toMatchObject({ status: 'completed', contactsFailed: 3, contactsCompleted: 0 });
    expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution).toMatchObject({ status: 'completed', contactsFailed: 3, creditsSpent: 3 });
  });

  it('deleting a program keeps the ledger rows of the credits its executions spent, on both doors', async () => {
    const org = await app.organization();
    const rest = await buildCampaign(org, 2);
    const graphql = await buildCampaign(org, 1);
    await addCredits(org, 10);
    const { runner } = buildRunner(app, { seed: 'semantics-ledger', weights: ALWAYS_ANSWERED });
    const spent: Record<string, string> = {};
    for (const { programId } of [rest, graphql]) {
      const id = await scheduledExecution(org, programId);
      await org.rest.post(`/api/executions/${id}/start`);
      await tickUntil(
        runner,
        () => readExecution(org, programId, id),
        (each) => each.status === 'completed',
      );
      spent[programId] = id;
    }
    const before = (await org.rest.get('/api/organization/credit-ledger?limit=100')).body;

    expect((await org.rest.delete(`/api/programs/${rest.programId}`)).status).toBe(204);
    expect((await org.graphql.ok(DeleteProgramDocument, { id: graphql.programId })).deleteProgram.id).toBe(graphql.programId);
    expect((await org.rest.get(`/api/programs/${rest.programId}`)).status).toBe(404);
    expect((await org.rest.get(`/api/executions/${spent[rest.programId]}`)).status).toBe(404);

    const after = await org.rest.get('/api/organization/credit-ledger?limit=100');
    expect(after.body).toEqual(before);
    const spends = (after.body.data as { kind: string; amount: number; executionId: string }[]).filter((entry) => entry.kind === 'spend');
    expect(new Set(spends.map((entry) => entry.executionId))).toEqual(new Set(Object.values(spent)));
    expect(spends.reduce((sum, entry) => sum + entry.amount, 0)).toBe(-3);
    expect((await org.graphql.ok(CreditLedgerDocument, { limit: 100 })).creditLedger).toEqual(after.body);
    expect(await creditBalance(org)).toBe(7);
  });
});

describe('transition-logs', () => {
  // Every execution state change is one info line with the execution, program, organization, from, to and reason.

  interface Line {
    level: number;
    msg: string;
    component?: string;
    executionId?: string;
    programId?: string;
    organizationId?: string;
    from?: string | null;
    to?: string;
    reason?: string;
  }

  const lines: Line[] = [];
  const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };
  /** The transitions logged for one execution, in order, as [from, to, reason]. */
  const movesOf = (executionId: string) =>
    lines.filter((line) => line.component === 'executions' && line.executionId === executionId).map((line) => [line.from, line.to, line.reason]);

  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ logLevel: 'info' }, sink);
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    lines.length = 0;
  });

  /** A runner as main.ts builds it, logging at info into the same destination. */
  function runner(seed: string, now: () => Date = clock) {
    const dialer = new SimulatedDialer({ speedMs: 0, seed, weights: ALWAYS_ANSWERED });
    return testRunner(app, { dialer, logger: createLogger('info', sink), intervalMs: 5, clock: now });
  }

  async function created(org: TestOrganization, programId: string, body?: Record<string, unknown>): Promise<string> {
    const res = await org.rest.post(`/api/programs/${programId}/executions`, body);
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it('user moves on both doors: created, started, paused, resumed, stopped and cancelled, one info line each', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 2);
    await addCredits(org, 5);
    const id = await created(org, programId);
    expect((await org.rest.post(`/api/executions/${id}/start`)).status).toBe(200);
    await org.graphql.ok(PauseExecutionDocument, { id });
    await org.rest.post(`/api/executions/${id}/resume`);
    await org.graphql.ok(StopExecutionDocument, { id });
    const other = await created(org, programId);
    await org.graphql.ok(CancelExecutionDocument, { id: other });
    // A refused move (409) logs nothing.
    expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(409);

    expect(movesOf(id)).toEqual([
      [null, 'scheduled', 'user'],
      ['scheduled', 'running', 'user'],
      ['running', 'paused', 'user'],
      ['paused', 'running', 'user'],
      ['running', 'stopped', 'user'],
    ]);
    expect(movesOf(other)).toEqual([
      [null, 'scheduled', 'user'],
      ['scheduled', 'cancelled', 'user'],
    ]);
    const logged = lines.filter((line) => line.component === 'executions' && line.executionId === id);
    expect(logged.map((line) => line.msg)).toEqual([
      'execution created: new → scheduled (user)',
      'execution started: scheduled → running (user)',
      'execution paused: running → paused (user)',
      'execution resumed: paused → running (user)',
      'execution stopped: running → stopped (user)',
    ]);
    expect(logged.every((line) => line.level === 30 && line.programId === programId && line.organizationId === org.organizationId)).toBe(true);
  });

  it('runner moves: paused for credits and at a threshold, resumed, completed; each with its reason', async () => {
    const org = await app.organization();
    const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
    const { programId } = await buildCampaign(org, 3, { maxConcurrentCalls: 2, autoPauseRules: [rule] });
    await addCredits(org, 1);
    const id = await created(org, programId);
    await org.rest.post(`/api/executions/${id}/start`);
    const read = () => readExecution(org, programId, id);
    const work = runner('transition-logs');

    // Two slots, one credit: one call, then paused_no_credits; that call still counts at "say".
    await tickUntil(work, read, (each) => each.status === 'paused_no_credits' && each.contactsInProgress === 0);
    await addCredits(org, 5);
    expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(200);
    // The next contact at "say" makes two: paused_threshold.
    await tickUntil(work, read, (each) => each.status === 'paused_threshold' && each.contactsInProgress === 0);
    await org.graphql.ok(ResumeExecutionDocument, { id });
    await tickUntil(work, read, (each) => each.status === 'completed');

    expect(movesOf(id)).toEqual([
      [null, 'scheduled', 'user'],
      ['scheduled', 'running', 'user'],
      ['running', 'paused_no_credits', 'no_credits'],
      ['paused_no_credits', 'running', 'user'],
      ['running', 'paused_threshold', 'threshold'],
      ['paused_threshold', 'running', 'user'],
      ['running', 'completed', 'no_contacts_left'],
    ]);
    const runnerLines = lines.filter((line) => line.component === 'executions' && line.reason !== 'user');
    expect(runnerLines.map((line) => line.msg)).toEqual([
      'execution paused: running → paused_no_credits (no_credits)',
      'execution paused: running → paused_threshold (threshold)',
      'execution completed: running → completed (no_contacts_left)',
    ]);
    expect(runnerLines.every((line) => line.level === 30 && line.programId === programId && line.organizationId === org.organizationId)).toBe(true);
  });

  it('schedule moves: started at scheduledStartAt and stopped at scheduledStopAt, with reason schedule', async () => {
    const org = await app.organization();
    // Ten past an hour, well ahead: no contact's clock is at 23:59, the minute the all-day window leaves out.
    const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 7_800_000);
    const stop = new Date(start.getTime() + 3_600_000);
    const { programId } = await buildCampaign(org, 2, { scheduledStartAt: start.toISOString(), scheduledStopAt: stop.toISOString() });
    const id = await created(org, programId);
    let now = new Date(start.getTime() + 1000);
    const work = runner('transition-schedule', () => now);
    await work.tick();
    await work.idle();
    // No credits: the first claim pauses it, which is logged too.
    now = new Date(stop.getTime() + 1000);
    await work.tick();
    expect(movesOf(id)).toEqual([
      [null, 'scheduled', 'user'],
      ['scheduled', 'running', 'schedule'],
      ['running', 'paused_no_credits', 'no_credits'],
      ['paused_no_credits', 'stopped', 'schedule'],
    ]);
  });
});

describe('waiting', () => {
  // Why a running execution places no call: the runner's own finding on both doors (the single read,
  // the program's list the database writes as JSON, GraphQL), in execution.progress, and one log line
  // per new reason. Every runner here is driven by hand on a pinned clock: nothing waits on wall time.

  interface Line {
    level: number;
    msg: string;
    executionId?: string;
    waitingReason?: string;
    nextCallAt?: string | null;
  }
  const lines: Line[] = [];
  const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };
  /** The runner's "execution waiting" lines for one execution, as [reason, nextCallAt]. */
  const waitingLines = (executionId: string) =>
    lines.filter((line) => line.executionId === executionId && line.msg.startsWith('execution waiting:')).map((line) => [line.waitingReason, line.nextCallAt]);

  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    lines.length = 0;
  });

  /** A hand-driven runner on `now`, logging at info. */
  function runnerAt(now: () => Date, dialer: Dialer = new SimulatedDialer({ speedMs: 0, seed: 'waiting', weights: ALWAYS_ANSWERED })) {
    return testRunner(app, { dialer, logger: createLogger('info', sink), intervalMs: 5, clock: now });
  }

  /** The execution's waitingReason and nextCallAt, the same on REST (one, and the list), and GraphQL (one, and the list). */
  async function waitingOf(
    org: TestOrganization,
    programId: string,
    id: string,
  ): Promise<{ status: string; waitingReason: string | null; nextCallAt: string | null }> {
    const rest = await org.rest.get(`/api/executions/${id}`);
    expect(rest.status).toBe(200);
    const shown = { status: rest.body.status, waitingReason: rest.body.waitingReason, nextCallAt: rest.body.nextCallAt };
    const listed = (await org.rest.get(`/api/programs/${programId}/executions`)).body.find((execution: { id: string }) => execution.id === id);
    expect({ status: listed.status, waitingReason: listed.waitingReason, nextCallAt: listed.nextCallAt }).toEqual(shown);
    const { execution } = await org.graphql.ok(ExecutionWaitingDocument, { id });
    expect({ status: execution.status, waitingReason: execution.waitingReason ?? null, nextCallAt: execution.nextCallAt ?? null }).toEqual(shown);
    const { executions } = await org.graphql.ok(ProgramExecutionsWaitingDocument, { programId });
    const inList = executions.find((each) => each.id === id)!;
    expect({ status: inList.status, waitingReason: inList.waitingReason ?? null, nextCallAt: inList.nextCallAt ?? null }).toEqual(shown);
    // Program.executions reads only the columns its selection needs: these fields name theirs.
    const { program } = await org.graphql.ok(ProgramNestedExecutionsWaitingDocument, { id: programId });
    const nested = program.executions.find((each) => each.id === id)!;
    expect({ waitingReason: nested.waitingReason ?? null, nextCallAt: nested.nextCallAt ?? null }).toEqual({
      waitingReason: shown.waitingReason,
      nextCallAt: shown.nextCallAt,
    });
    return shown;
  }

  /** The execution.progress events of one execution, oldest first, as [waitingReason, nextCallAt]. */
  async function progressOf(org: TestOrganization, id: string): Promise<(string | null)[][]> {
    const res = await org.rest.get('/api/events?type=execution.progress&limit=100&sortOrder=asc');
    expect(res.status).toBe(200);
    return (res.body.data as { payload: { id: string; waitingReason: string | null; nextCallAt: string | null } }[])
      .filter((event) => event.payload.id === id)
      .map((event) => [event.payload.waitingReason, event.payload.nextCallAt]);
  }

  async function started(org: TestOrganization, programId: string): Promise<string> {
    const created = await org.rest.post(`/api/programs/${programId}/executions`);
    expect(created.status).toBe(201);
    const start = await org.rest.post(`/api/executions/${created.body.id}/start`);
    expect(start.body).toMatchObject({ status: 'running', waitingReason: null, nextCallAt: null });
    return created.body.id;
  }

  /** Holds every call it is asked to place until released; then it is answered. */
  class HeldDialer implements Dialer {
    readonly phones: string[] = [];
    private readonly held: (() => void)[] = [];
    async placeCall(call: { phone: string }) {
      this.phones.push(call.phone);
      await new Promise<void>((resolve) => this.held.push(resolve));
      return { outcome: 'answered' as const, reachedNodeIds: [], durationSeconds: 1 };
    }
    release(): void {
      for (const resolve of this.held.splice(0)) resolve();
    }
  }

  it('outside every pending contact’s window: the reason and the first opening on the contacts’ own clocks, one log line, one event; the calls start then', async () => {
    const org = await app.organization();
    // New York, Paris and Tokyo, weekdays 09:00–17:00 on each one's clock.
    const { programId } = await buildCampaign(org, 3, {
      callingWindow: { startTime: '09:00', endTime: '17:00', daysOfWeek: [1, 2, 3, 4, 5] },
      maxConcurrentCalls: 3,
    });
    await addCredits(org, 10);
    const id = await started(org, programId);
    // Saturday 2026-03-14 12:00Z: the weekend everywhere. Tokyo opens first, Monday 09:00 JST = 00:00Z.
    let now = new Date('2026-03-14T12:00:00Z');
    const runner = runnerAt(() => now);
    for (let tick = 0; tick < 4; tick++) await runner.tick();
    await runner.idle();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'outside_calling_window', nextCallAt: '2026-03-16T00:00:00.000Z' });
    expect((await org.rest.get(`/api/calls?executionId=${id}`)).body.data).toEqual([]);
    expect(waitingLines(id)).toEqual([['outside_calling_window', '2026-03-16T00:00:00.000Z']]);
    expect(await progressOf(org, id)).toEqual([['outside_calling_window', '2026-03-16T00:00:00.000Z']]);

    // Tokyo's window opens: its contact is called; Paris is next, at 09:00 CET = 08:00Z. The same reason logs no second line.
    now = new Date('2026-03-16T00:00:00Z');
    await runner.tick();
    await runner.idle();
    await runner.tick();
    const called = (await org.rest.get(`/api/calls?executionId=${id}`)).body.data as { to: string }[];
    expect(called).toHaveLength(1);
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'outside_calling_window', nextCallAt: '2026-03-16T08:00:00.000Z' });
    expect(waitingLines(id)).toHaveLength(1);
    expect((await progressOf(org, id)).map(([, next]) => next)).toContain('2026-03-16T08:00:00.000Z');

    // Monday afternoon in New York: everyone is called, and once completed nothing waits.
    now = new Date('2026-03-16T13:00:00Z');
    await tickUntil(
      runner,
      () => readExecution(org, programId, id),
      (execution) => execution.status === 'completed',
    );
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'completed', waitingReason: null, nextCallAt: null });

    // Another organization: 404 on both doors.
    const other = await app.organization();
    expect((await other.rest.get(`/api/executions/${id}`)).status).toBe(404);
    expect((await other.graphql.run(ExecutionWaitingDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('a program on Twilio without a connection: carrier_not_configured, nothing dialed, one line naming what is missing; a PUT to that is refused on both doors', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 2);
    await addCredits(org, 10);
    // The change the issue made: refused now, naming what activation names, on both doors alike; nothing changed.
    const rest = await org.rest.put(`/api/programs/${programId}`, { carrier: 'twilio' });
    expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
    expect(rest.body.detail).toMatch(
      /^The program is active, and this change would leave it unable to run on twilio: the organization has no twilio carrier connection .*; the program has no fromNumberId .*; PUBLIC_URL is not set/,
    );
    const graphql = await org.graphql.run(UpdateProgramDocument, { id: programId, input: { carrier: 'twilio' } });
    expect([graphql.errors?.[0]?.extensions.code, graphql.errors?.[0]?.message]).toEqual(['CONFLICT', rest.body.detail]);
    expect((await org.rest.get(`/api/programs/${programId}`)).body.carrier).toBe('simulator');
    // Another organization's PUT: 404 on both doors.
    const other = await app.organization();
    expect((await other.rest.put(`/api/programs/${programId}`, { carrier: 'twilio' })).status).toBe(404);
    expect((await other.graphql.run(UpdateProgramDocument, { id: programId, input: { carrier: 'twilio' } })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');

    // A program left so anyway (changed before this check existed, or its number's connection removed since): the runner says why.
    await app.sql(`update programs set carrier = 'twilio' where id = ?`, [programId]);
    const id = await started(org, programId);
    const dialer = new HeldDialer();
    const runner = runnerAt(() => new Date('2026-03-10T12:00:00Z'), dialer);
    for (let tick = 0; tick < 3; tick++) await runner.tick();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'carrier_not_configured', nextCallAt: null });
    expect(dialer.phones).toEqual([]);
    const said = lines.filter((line) => line.executionId === id && line.msg.startsWith('execution waiting:'));
    expect(said.map((line) => line.msg)).toEqual([
      'execution waiting: the program’s carrier cannot place calls (the program has no caller ID (fromNumberId) on twilio)',
    ]);
  });

  it('retries: retry_wait until the first retry is due, then the calls; a pause says paused, and a resume looks afresh', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 2, { retryPolicy: { maxAttempts: 2, retryDelayMinutes: 10 } });
    await addCredits(org, 10);
    const id = await started(org, programId);
    let now = new Date('2026-03-10T12:00:00Z');
    const runner = runnerAt(
      () => now,
      new SimulatedDialer({ speedMs: 0, seed: 'retries', weights: { answered: 0, no_answer: 100, busy: 0, voicemail: 0, failed: 0 } }),
    );
    await runner.tick();
    await runner.idle();
    await runner.tick();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'retry_wait', nextCallAt: '2026-03-10T12:10:00.000Z' });
    expect(waitingLines(id)).toEqual([['retry_wait', '2026-03-10T12:10:00.000Z']]);

    // A user pause: paused, whatever the runner last found; a resume looks afresh.
    expect((await org.graphql.ok(PauseExecutionDocument, { id })).pauseExecution.status).toBe('paused');
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'paused', waitingReason: 'paused', nextCallAt: null });
    expect((await org.rest.post(`/api/executions/${id}/resume`)).body).toMatchObject({ status: 'running', waitingReason: null, nextCallAt: null });

    now = new Date('2026-03-10T12:10:00Z');
    await runner.tick();
    await runner.idle();
    await runner.tick();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'completed', waitingReason: null, nextCallAt: null });
  });

  it('every slot holds a call: concurrency_limit; out of credits: paused_no_credits says no_credits; a scheduled one says when it starts', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 3, { maxConcurrentCalls: 1, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    await addCredits(org, 2);
    const planned = await org.rest.post(`/api/programs/${programId}/executions`, { scheduledStartAt: '2026-04-01T08:00:00.000Z' });
    expect(planned.body).toMatchObject({ status: 'scheduled', waitingReason: 'scheduled', nextCallAt: '2026-04-01T08:00:00.000Z' });
    expect(await waitingOf(org, programId, planned.body.id)).toEqual({
      status: 'scheduled',
      waitingReason: 'scheduled',
      nextCallAt: '2026-04-01T08:00:00.000Z',
    });
    expect((await org.rest.post(`/api/executions/${planned.body.id}/cancel`)).body).toMatchObject({ status: 'cancelled', waitingReason: null });

    const id = await started(org, programId);
    const dialer = new HeldDialer();
    const runner = runnerAt(() => new Date('2026-03-10T12:00:00Z'), dialer);
    await runner.tick();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'concurrency_limit', nextCallAt: null });
    dialer.release();
    await runner.idle();
    await runner.tick();
    expect(dialer.phones).toHaveLength(2);
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'running', waitingReason: 'concurrency_limit', nextCallAt: null });
    dialer.release();
    await runner.idle();
    await runner.tick();
    expect(await waitingOf(org, programId, id)).toEqual({ status: 'paused_no_credits', waitingReason: 'no_credits', nextCallAt: null });
    expect(dialer.phones).toHaveLength(2);
    // The routine limit is logged at debug, not at info.
    expect(waitingLines(id)).toEqual([]);
  });

  it('a number on a live call of the program: number_in_call until that call ends', async () => {
    const org = await app.organization();
    const { programId } = await buildCampaign(org, 1, { maxConcurrentCalls: 2 });
    await addCredits(org, 10);
    const dialer = new HeldDialer();
    const runner = runnerAt(() => new Date('2026-03-10T12:00:00Z'), dialer);
    // The first execution's call is on the line when it is paused; a second execution of the program starts.
    const first = await started(org, programId);
    await runner.tick();
    expect(dialer.phones).toHaveLength(1);
    expect((await org.rest.post(`/api/executions/${first}/pause`)).status).toBe(200);
    const second = await started(org, programId);
    await runner.tick();
    expect(await waitingOf(org, programId, second)).toEqual({ status: 'running', waitingReason: 'number_in_call', nextCallAt: null });
    expect(waitingLines(second)).toEqual([['number_in_call', null]]);
    dialer.release();
    await runner.idle();
    await runner.tick();
    expect(dialer.phones).toHaveLength(2);
    expect(await waitingOf(org, programId, second)).toEqual({ status: 'running', waitingReason: null, nextCallAt: null });
    dialer.release();
    await runner.idle();
    await runner.tick();
    expect((await waitingOf(org, programId, second)).status).toBe('completed');
    expect((await org.rest.post(`/api/executions/${first}/stop`)).status).toBe(200);
  });
});
