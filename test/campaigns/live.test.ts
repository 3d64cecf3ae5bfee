import { ActivateProgramDocument, CampaignExecutionDocument, CreateProgramDocument, TriggersDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ALL_DAY, ALWAYS_ANSWERED, addCredits, buildRunner, createAudience, createFlow, creditBalance, importContacts, loggedErrors, logs, readExecution, tickUntil } from './fixtures.js';

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
  const audienceId = await createAudience(org, contacts.map((contact) => contact.id));
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
  expect(fired.every((event) => event.payload.executionId === live.id && event.payload.programId === programId && event.payload.status === 'triggered')).toBe(true);
  const opened = (await org.rest.get('/api/events?type=execution.created')).body.data as { payload: Record<string, unknown> }[];
  expect(opened.map((event) => [event.payload.id, event.payload.from, event.payload.to, event.payload.reason])).toEqual([[live.id, null, 'running', 'trigger']]);

  const end = await tickUntil(runner, () => readExecution(org, programId, live.id), (execution) => execution.status === 'completed');
  expect(end).toMatchObject({ totalContacts: 3, contactsCompleted: 3, contactsFailed: 0, actualEndAt: now.toISOString() });
  expect((await org.graphql.ok(CampaignExecutionDocument, { id: live.id })).execution?.creditsSpent).toBe(3);
  expect(await creditBalance(org)).toBe(47);
  // Fired triggers do not fire twice, and the opted-out contact was never queued.
  await runner.tick();
  expect((await org.rest.get(`/api/programs/${programId}/executions`)).body.map((each: { totalContacts: number }) => each.totalContacts)).toEqual([3]);
  const statuses = (await org.rest.get(`/api/programs/${programId}/triggers`)).body.map((trigger: { contactId: string; status: string }) => [trigger.contactId, trigger.status]);
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
  const next = await tickUntil(runner, () => readExecution(org, programId, both[0].id), (execution) => execution.status === 'completed');
  expect(next).toMatchObject({ totalContacts: 1, contactsCompleted: 1 });
  expect(await creditBalance(org)).toBe(46);
  expect((await org.rest.get(`/api/programs/${programId}/triggers?status=pending`)).body).toEqual([]);
});
