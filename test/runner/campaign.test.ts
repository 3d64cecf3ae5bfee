import { ExecutionStatus } from '../../src/modules/programs/program.enums.js';
import { isFinalOutcome, type CallOutcome } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createCampaign, creditBalance, expectConsistent, readExecution, RecordingDialer, runnerErrors, runnerLogs, testRunner, waitFor, type ExecutionRow } from './fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(runnerErrors()).toEqual([]);
  runnerLogs.length = 0;
});

/** What the seeded dialer will make of one contact: its outcomes, attempt by attempt. */
function expectedCalls(dialer: SimulatedDialer, phone: string, maxAttempts: number): CallOutcome[] {
  const outcomes: CallOutcome[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    outcomes.push(dialer.outcomeOf(phone, attempt));
    if (isFinalOutcome(outcomes.at(-1)!)) break;
  }
  return outcomes;
}

async function contactRows(executionId: string) {
  return app.sql<{ phone: string; status: string; attempts: number; last_outcome: string; reached_node_ids: string[]; claimed_by: string | null }>(
    'select phone, status, attempts, last_outcome, reached_node_ids, claimed_by from execution_contacts where execution_id = ?',
    [executionId],
  );
}

it('runs a campaign to completed; the counters add up at every observed moment', async () => {
  const seeded = new SimulatedDialer({ seed: 'campaign', speedMs: 15 });
  const dialer = new RecordingDialer(seeded);
  const campaign = await createCampaign(app, { contacts: 40, maxConcurrentCalls: 4, retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 } });
  const runner = testRunner(app, { dialer });
  const samples: ExecutionRow[] = [];
  runner.start();
  const end = await waitFor(
    () => readExecution(app, campaign.executionId),
    (row) => row.status !== ExecutionStatus.running,
    (row) => {
      expectConsistent(row);
      expect(row.contactsInProgress).toBeLessThanOrEqual(4);
      samples.push(row);
    },
  );
  await runner.stop();

  expect(end.status).toBe(ExecutionStatus.completed);
  expect(end.actualEndAt).not.toBeNull();
  expect(end.contactsCompleted + end.contactsFailed).toBe(40);
  expect(end.contactsPending + end.contactsInProgress).toBe(0);
  // The runner was watched mid-flight, not only at the end.
  expect(samples.some((row) => row.contactsInProgress > 0)).toBe(true);

  const expected = new Map(campaign.phones.map((phone) => [phone, expectedCalls(seeded, phone, 2)]));
  const completed = [...expected.values()].filter((calls) => isFinalOutcome(calls.at(-1)!)).length;
  expect(end.contactsCompleted).toBe(completed);
  expect(dialer.calls).toHaveLength([...expected.values()].reduce((sum, calls) => sum + calls.length, 0));
  expect(end.creditsSpent).toBe(dialer.calls.length);
  expect(await creditBalance(app, campaign.org.organizationId)).toBe(1_000_000 - dialer.calls.length);

  let answered = 0;
  for (const row of await contactRows(campaign.executionId)) {
    const calls = expected.get(row.phone)!;
    expect(row.attempts).toBe(calls.length);
    expect(row.last_outcome).toBe(calls.at(-1));
    expect(row.status).toBe(isFinalOutcome(calls.at(-1)!) ? 'completed' : 'failed');
    expect(row.claimed_by).toBeNull();
    if (row.last_outcome === 'answered') {
      answered++;
      expect(row.reached_node_ids).toEqual(['start', 'greet', 'offer', 'end']);
    }
  }
  // Nodes count contacts: each contact that connected once passed the start node; only answered ones greeted.
  expect(end.nodeCounts.start).toBe(end.contactsCompleted);
  expect(end.nodeCounts.greet).toBe(answered);
  // Each call carried the flow and its attempt number.
  expect(dialer.calls.every((call) => call.flow?.nodes.length === 5)).toBe(true);
  expect(dialer.calls.filter((call) => call.attempt === 2).length).toBe(dialer.calls.length - 40);
});

it('retries per policy: at most maxAttempts calls, each after retryDelayMinutes', async () => {
  let now = new Date('2026-06-01T12:00:00Z');
  const seeded = new SimulatedDialer({ seed: 'retries', speedMs: 0, weights: { answered: 1, no_answer: 2, busy: 0, voicemail: 0, failed: 0 } });
  const dialer = new RecordingDialer(seeded);
  const campaign = await createCampaign(app, { contacts: 12, maxConcurrentCalls: 12, retryPolicy: { maxAttempts: 3, retryDelayMinutes: 30 } });
  const runner = testRunner(app, { dialer, clock: () => now });
  const round = async () => {
    await runner.tick();
    await runner.idle();
    expectConsistent(await readExecution(app, campaign.executionId));
  };

  await round();
  expect(dialer.calls).toHaveLength(12);
  const retried = campaign.phones.filter((phone) => seeded.outcomeOf(phone, 1) === 'no_answer');
  expect(retried.length).toBeGreaterThan(0);
  await round(); // same minute: nobody is due again yet
  expect(dialer.calls).toHaveLength(12);
  now = new Date(now.getTime() + 29 * 60_000);
  await round();
  expect(dialer.calls).toHaveLength(12);
  now = new Date(now.getTime() + 60_000);
  await round();
  expect(dialer.calls.slice(12).map((call) => call.phone).sort()).toEqual([...retried].sort());
  now = new Date(now.getTime() + 30 * 60_000);
  await round();
  now = new Date(now.getTime() + 30 * 60_000);
  await round(); // a fourth attempt is never made

  const expected = new Map(campaign.phones.map((phone) => [phone, expectedCalls(seeded, phone, 3)]));
  expect(dialer.calls).toHaveLength([...expected.values()].reduce((sum, calls) => sum + calls.length, 0));
  for (const row of await contactRows(campaign.executionId)) {
    expect(row.attempts).toBe(expected.get(row.phone)!.length);
    expect(row.attempts).toBeLessThanOrEqual(3);
  }
  const end = await readExecution(app, campaign.executionId);
  expect(end.status).toBe(ExecutionStatus.completed);
  expect(end.contactsFailed).toBe([...expected.values()].filter((calls) => calls.length === 3 && calls[2] === 'no_answer').length);
});

it('calls only contacts whose own clock is inside the calling window', async () => {
  const now = new Date('2026-03-10T01:00:00Z'); // Tuesday 10:00 in Tokyo, Monday 18:00 in Los Angeles, 01:00 UTC
  const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
  const campaign = await createCampaign(app, {
    contacts: 9,
    timeZones: ['Asia/Tokyo', 'America/Los_Angeles', null],
    callingWindow: { startTime: '09:00', endTime: '12:00', daysOfWeek: [1, 2, 3, 4, 5] },
  });
  const runner = testRunner(app, { dialer, clock: () => now });
  await runner.tick();
  await runner.idle();
  expect(dialer.calls.map((call) => call.timeZone)).toEqual(['Asia/Tokyo', 'Asia/Tokyo', 'Asia/Tokyo']);
  const row = await readExecution(app, campaign.executionId);
  expectConsistent(row);
  expect(row.status).toBe(ExecutionStatus.running);
  expect(row.contactsPending).toBe(6);
  await app.sql(`update executions set status = 'stopped' where id = ?`, [campaign.executionId]);
});

it('a window that no local time matches dials nobody', async () => {
  const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
  const campaign = await createCampaign(app, {
    contacts: 6,
    timeZones: ['Europe/Paris', 'America/New_York', null],
    callingWindow: { startTime: '00:00', endTime: '00:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] },
  });
  const runner = testRunner(app, { dialer });
  for (let i = 0; i < 3; i++) await runner.tick();
  await runner.idle();
  expect(dialer.calls).toEqual([]);
  const row = await readExecution(app, campaign.executionId);
  expect(row).toMatchObject({ status: ExecutionStatus.running, contactsPending: 6, creditsSpent: 0 });
  await app.sql(`update executions set status = 'stopped' where id = ?`, [campaign.executionId]);
});

it('never calls a contact who opted out after the start: the row fails with no call and no credit', async () => {
  const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
  const campaign = await createCampaign(app, { contacts: 6 });
  const optedOut = campaign.phones.slice(0, 2);
  await app.sql(`update contacts set opted_out = true where phone in (?, ?)`, optedOut);
  const runner = testRunner(app, { dialer });
  const end = await waitFor(
    async () => {
      await runner.tick();
      await runner.idle();
      return readExecution(app, campaign.executionId);
    },
    (row) => row.status === ExecutionStatus.completed,
    expectConsistent,
  );
  expect(dialer.calls.map((call) => call.phone).sort()).toEqual(campaign.phones.slice(2).sort());
  expect(end.creditsSpent).toBe(4);
  const rows = await app.sql<{ status: string; attempts: number }>(
    `select status, attempts from execution_contacts where execution_id = ? and last_outcome = 'opted_out'`,
    [campaign.executionId],
  );
  expect(rows).toEqual([
    { status: 'failed', attempts: 0 },
    { status: 'failed', attempts: 0 },
  ]);
});

it('never calls a contact deleted after the start: the row fails as contact_deleted with no call and no credit', async () => {
  const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
  const campaign = await createCampaign(app, { contacts: 5 });
  const [deleted, optedOut] = campaign.phones;
  await app.sql('delete from contacts where phone = ?', [deleted]);
  await app.sql('update contacts set opted_out = true where phone = ?', [optedOut]);
  const runner = testRunner(app, { dialer });
  const end = await waitFor(
    async () => {
      await runner.tick();
      await runner.idle();
      return readExecution(app, campaign.executionId);
    },
    (row) => row.status === ExecutionStatus.completed,
    expectConsistent,
  );
  expect(dialer.calls.map((call) => call.phone).sort()).toEqual(campaign.phones.slice(2).sort());
  expect(end).toMatchObject({ creditsSpent: 3, totalContacts: 5 });
  const rows = await app.sql<{ phone: string; status: string; attempts: number; last_outcome: string }>(
    `select phone, status, attempts, last_outcome from execution_contacts where execution_id = ? and phone in (?, ?) order by last_outcome`,
    [campaign.executionId, deleted, optedOut],
  );
  expect(rows).toEqual([
    { phone: deleted, status: 'failed', attempts: 0, last_outcome: 'contact_deleted' },
    { phone: optedOut, status: 'failed', attempts: 0, last_outcome: 'opted_out' },
  ]);
});

it('starts scheduled executions at their start time and stops them at their stop time', async () => {
  let now = new Date('2026-06-01T08:00:00Z');
  const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
  const campaign = await createCampaign(app, {
    contacts: 4,
    maxConcurrentCalls: 2,
    status: ExecutionStatus.scheduled,
    scheduledStartAt: new Date('2026-06-01T09:00:00Z'),
    scheduledStopAt: new Date('2026-06-01T10:00:00Z'),
  });
  const runner = testRunner(app, { dialer, clock: () => now });
  await runner.tick();
  expect((await readExecution(app, campaign.executionId)).status).toBe(ExecutionStatus.scheduled);
  expect(dialer.calls).toHaveLength(0);

  now = new Date('2026-06-01T09:00:00Z');
  await runner.tick();
  await runner.idle();
  const [started] = await app.sql<{ status: string; actual_start_at: Date }>('select status, actual_start_at from executions where id = ?', [campaign.executionId]);
  expect(started.status).toBe('running');
  expect(new Date(started.actual_start_at).toISOString()).toBe(now.toISOString());
  expect(dialer.calls).toHaveLength(2);

  now = new Date('2026-06-01T10:00:00Z');
  await runner.tick();
  await runner.idle();
  const stopped = await readExecution(app, campaign.executionId);
  expectConsistent(stopped);
  expect(stopped.status).toBe(ExecutionStatus.stopped);
  expect(new Date(stopped.actualEndAt!).toISOString()).toBe(now.toISOString());
  expect(stopped.contactsPending).toBe(2);
  expect(dialer.calls).toHaveLength(2);
});

it('runs the onTick hooks each tick; a failing hook is logged and the others still run', async () => {
  const seen: Date[] = [];
  const now = new Date('2026-06-02T00:00:00Z');
  const runner = testRunner(app, { dialer: new SimulatedDialer({ speedMs: 0 }), clock: () => now });
  runner.onTick.push(async () => {
    throw new Error('hook failed');
  });
  runner.onTick.push(async (at) => {
    seen.push(at);
  });
  await runner.tick();
  await runner.tick();
  expect(seen).toEqual([now, now]);
  expect(runnerErrors()).toEqual(['campaign runner: tick hook failed', 'campaign runner: tick hook failed']);
  runnerLogs.length = 0;
});
