import { Writable } from 'node:stream';
import twilio from 'twilio';
import { createLogger } from '../../src/common/logger.js';
import { loadConfig } from '../../src/config.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type CallOutcome, type FakeTwilio } from '../support/fake-twilio.js';
import { FLOW, runUntilCompleted, startTwilioApp, twilioCampaign, waitForExecution } from './fixtures.js';
import { testRunner } from '../runner/fixtures.js';

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;
const logs: Record<string, unknown>[] = [];

beforeAll(async () => {
  fake = await startFakeTwilio();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  // Webhooks renew a live call's lease by RUNNER_LEASE_MS: one second here, so a lost end is asked about soon.
  const config = loadConfig({ JWT_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/gateway-test-unused' });
  app = await startTwilioApp(fake, sink, { logLevel: 'warn', runner: { ...config.runner, leaseMs: 1000 } });
  acme = await app.organization('Acme');
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});
afterEach(() => fake.faults({}));

interface CallRow {
  status: string;
  outcome: string | null;
  to_number: string;
  from_number: string | null;
  carrier_call_id: string | null;
  answered_by: string | null;
  duration_seconds: number | null;
  credits_charged: number;
  error_text: string | null;
  reached_node_ids: string[];
  attempt: number;
}

const callsOf = (executionId: string) =>
  app.sql<CallRow>(
    `select status, outcome, to_number, from_number, carrier_call_id, answered_by, duration_seconds, credits_charged, error_text, reached_node_ids, attempt
       from calls where execution_id = ? order by queued_at, to_number`,
    [executionId],
  );

const OUTCOMES: CallOutcome[] = ['answered', 'busy', 'no-answer', 'voicemail', 'failed', 'answered'];
const EXPECTED: Record<CallOutcome, { status: string; outcome: string }> = {
  answered: { status: 'completed', outcome: 'answered' },
  busy: { status: 'busy', outcome: 'busy' },
  'no-answer': { status: 'no_answer', outcome: 'no_answer' },
  // A machine's verdict comes after its greeting: the flow's voicemail branch is left after the beep.
  voicemail: { status: 'completed', outcome: 'voicemail_left' },
  failed: { status: 'failed', outcome: 'failed' },
};

/** Each phone's scripted outcome at the fake, by its place in the campaign. */
function scriptOutcomes(phones: string[], stepMs = 10): Map<string, CallOutcome> {
  const byPhone = new Map(phones.map((phone, index) => [phone, OUTCOMES[index % OUTCOMES.length]]));
  fake.script((to) => ({ outcome: byPhone.get(to) ?? 'answered', durationSeconds: 42, stepMs }));
  return byPhone;
}

async function expectOneFinalCallPerContact(executionId: string, byPhone: Map<string, CallOutcome>) {
  const calls = await callsOf(executionId);
  expect(calls).toHaveLength(byPhone.size);
  expect(new Set(calls.map((call) => call.to_number)).size).toBe(byPhone.size);
  for (const call of calls) {
    const scripted = byPhone.get(call.to_number)!;
    expect({ status: call.status, outcome: call.outcome }).toEqual(EXPECTED[scripted]);
    expect(call.credits_charged).toBe(1);
    expect(call.carrier_call_id).toMatch(/^CA[0-9a-f]{32}$/);
    const connected = scripted === 'answered' || scripted === 'voicemail';
    expect(call.duration_seconds).toBe(connected ? 42 : 0);
    expect(call.answered_by).toBe(scripted === 'voicemail' ? 'machine' : connected ? 'human' : null);
  }
  const execution = (await acme.rest.get(`/api/executions/${executionId}`)).body;
  const connected = [...byPhone.values()].filter((outcome) => outcome === 'answered' || outcome === 'voicemail').length;
  expect(execution).toMatchObject({
    status: 'completed',
    contactsCompleted: connected,
    contactsFailed: byPhone.size - connected,
    contactsPending: 0,
    contactsInProgress: 0,
    creditsSpent: byPhone.size,
  });
  return calls;
}

describe('a campaign through Twilio', () => {
  it('places every call with a signed status callback and background machine detection, and records each call and contact once', async () => {
    const campaign = await twilioCampaign(acme, fake, { contacts: 6, callsPerSecond: 20 });
    const byPhone = scriptOutcomes(campaign.phones);
    await runUntilCompleted(app, acme, campaign.executionId, fake);
    const calls = await expectOneFinalCallPerContact(campaign.executionId, byPhone);

    // What Twilio was asked: the program's caller ID, our callbacks under PUBLIC_URL, all four events, AMD.
    const number = (await acme.rest.get(`/api/phone-numbers/${campaign.numberId}`)).body.number;
    const created = fake.calls();
    const mine = created.filter((call) => byPhone.has(call.to));
    expect(mine).toHaveLength(6);
    for (const call of mine) {
      expect(call.from).toBe(number);
      expect(call.statusCallback).toMatch(new RegExp(`^${app.baseUrl}/telephony/twilio/${campaign.connectionId}/status\\?callId=[0-9a-f-]{36}$`));
      expect(call.url).toMatch(new RegExp(`^${app.baseUrl}/telephony/twilio/${campaign.connectionId}/answer\\?callId=[0-9a-f-]{36}$`));
      expect(call.statusCallbackEvents.sort()).toEqual(['answered', 'completed', 'initiated', 'ringing']);
      expect(call.machineDetection).toBe('DetectMessageEnd');
      expect(call.asyncAmd?.callback).toMatch(new RegExp(`^${app.baseUrl}/telephony/twilio/${campaign.connectionId}/amd\\?callId=[0-9a-f-]{36}$`));
    }
    expect(calls.every((call) => call.from_number === number)).toBe(true);

    // Every answered call was told the flow's words at once (detection runs meanwhile); a machine's call was
    // then updated to say the voicemail branch after the beep; each walk is on its call.
    for (const call of mine.filter((call) => call.twiml !== null)) {
      const outcome = byPhone.get(call.to);
      expect(call.twimlStatus).toBe(200);
      expect(call.twiml).toContain(FLOW.nodes[1].label);
      expect(call.twiml).toContain('<Hangup/>');
      expect(call.updates.map((update) => update.Twiml)).toEqual(
        outcome === 'voicemail' ? [expect.stringContaining(`${FLOW.nodes[2].label}</Say><Hangup/>`)] : [],
      );
    }
    const answered = calls.filter((call) => call.outcome === 'answered');
    expect(answered.every((call) => JSON.stringify(call.reached_node_ids) === JSON.stringify(['start', 'hello', 'end']))).toBe(true);
    expect(calls.find((call) => call.outcome === 'voicemail_left')?.reached_node_ids).toEqual(['start', 'hello', 'end', 'vm']);
    expect(calls.filter((call) => call.outcome !== 'answered' && call.outcome !== 'voicemail_left').every((call) => call.reached_node_ids.length === 0)).toBe(
      true,
    );
    const execution = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
    expect(execution.nodeCounts ?? null).not.toBe(undefined);
  });

  it('duplicated and reordered callbacks land once: a completed call never goes back to ringing', async () => {
    const campaign = await twilioCampaign(acme, fake, { contacts: 6, callsPerSecond: 20 });
    const byPhone = scriptOutcomes(campaign.phones);
    fake.faults({ duplicate: true, reorder: true });
    await runUntilCompleted(app, acme, campaign.executionId, fake);
    await expectOneFinalCallPerContact(campaign.executionId, byPhone);
    const delivered = fake.callbacks().filter((callback) => byPhone.has(callback.params.To));
    expect(delivered.length).toBeGreaterThanOrEqual(2 * 6 * 3);
    expect(delivered.every((callback) => callback.status === 200)).toBe(true);
  });

  it('callbacks lost for good are reconciled by asking Twilio once the lease runs out', async () => {
    const campaign = await twilioCampaign(acme, fake, { contacts: 6, callsPerSecond: 20 });
    const byPhone = scriptOutcomes(campaign.phones);
    fake.faults({ drop: true });
    await runUntilCompleted(app, acme, campaign.executionId, null, { intervalMs: 20, leaseMs: 1000 });
    await expectOneFinalCallPerContact(campaign.executionId, byPhone);
    const fetched = fake.requests().filter((request) => request.method === 'GET' && /\/Calls\/CA[0-9a-f]{32}\.json$/.test(request.path));
    expect(fetched.length).toBeGreaterThanOrEqual(6);
  });

  it('Twilio answering 5xx: the contact is tried again later, the credit comes back, and the execution keeps running', async () => {
    const campaign = await twilioCampaign(acme, fake, { contacts: 2, callsPerSecond: 20, credits: 2 });
    fake.script(() => ({ outcome: 'answered', durationSeconds: 5, stepMs: 5 }));
    fake.faults({ createStatus: 503 });
    const runner = testRunner(app, { intervalMs: 20, placementRetryMs: 300 });
    runner.start();
    try {
      // Both placements fail: nothing is spent, the execution still runs, the contacts wait.
      const failedFirst = async () => (await callsOf(campaign.executionId)).filter((call) => call.status === 'failed').length >= 2;
      for (let i = 0; i < 200 && !(await failedFirst()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const during = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
      expect(during).toMatchObject({ status: 'running', contactsPending: 2, creditsSpent: 0 });
      expect((await acme.rest.get('/api/organization')).body.creditBalance ?? null).not.toBe(undefined);
      fake.faults({});
      await waitForExecution(acme, campaign.executionId, (execution) => execution.status === 'completed');
    } finally {
      await runner.stop();
    }
    const calls = await callsOf(campaign.executionId);
    const failed = calls.filter((call) => call.status === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed.every((call) => call.credits_charged === 0 && call.carrier_call_id === null && /503|unavailable|Service/i.test(call.error_text ?? ''))).toBe(
      true,
    );
    const completed = calls.filter((call) => call.status === 'completed');
    expect(completed).toHaveLength(2);
    expect(completed.every((call) => call.attempt === 1)).toBe(true);
    const execution = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
    expect(execution).toMatchObject({ contactsCompleted: 2, contactsFailed: 0, creditsSpent: 2 });
    const ledger = (await acme.rest.get(`/api/organization/credit-ledger?limit=100`)).body.data as {
      kind: string;
      amount: number;
      executionId: string | null;
    }[];
    const mine = ledger.filter((entry) => entry.executionId === campaign.executionId);
    expect(mine.filter((entry) => entry.kind === 'refund').reduce((sum, entry) => sum + entry.amount, 0)).toBe(failed.length);
    expect(mine.reduce((sum, entry) => sum + entry.amount, 0)).toBe(-2);
  });
});

describe('carrier webhooks', () => {
  let campaign: Awaited<ReturnType<typeof twilioCampaign>>;
  let callId: string;

  beforeAll(async () => {
    campaign = await twilioCampaign(acme, fake, { contacts: 1, callsPerSecond: 20 });
    fake.script(() => ({ outcome: 'answered', durationSeconds: 3, stepMs: 5 }));
    fake.faults({ drop: ['completed'] }); // the call stays in progress here: its end is what the forgeries try to write
    const runner = testRunner(app, { intervalMs: 20 });
    await runner.tick();
    await runner.idle();
    await fake.settled();
    [{ id: callId }] = await app.sql<{ id: string }>('select id from calls where execution_id = ?', [campaign.executionId]);
  });

  const statusUrl = () => `${app.baseUrl}/telephony/twilio/${campaign.connectionId}/status?callId=${callId}`;
  const completed = () => {
    const created = fake.calls().find((call) => call.to === campaign.phones[0])!;
    return {
      AccountSid: fake.accountSid,
      CallSid: created.sid,
      CallStatus: 'completed',
      CallDuration: '3',
      To: created.to,
      From: created.from,
      Direction: 'outbound-api',
      ApiVersion: '2010-04-01',
    };
  };
  const post = (url: string, params: Record<string, string>, signature?: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature ? { 'x-twilio-signature': signature } : {}) },
      body: new URLSearchParams(params),
    });
  const state = async () => (await app.sql<{ status: string }>('select status from calls where id = ?', [callId]))[0].status;

  it.each([
    ['no signature', () => undefined],
    ['a signature made with another token', () => twilio.getExpectedTwilioSignature('0'.repeat(32), statusUrl(), completed())],
    ['a signature over other fields', () => twilio.getExpectedTwilioSignature(fake.authToken, statusUrl(), { ...completed(), CallStatus: 'busy' })],
    ['a signature over another URL', () => twilio.getExpectedTwilioSignature(fake.authToken, statusUrl().replace('callId=', 'callId=0'), completed())],
  ])('%s → 403 and nothing changes', async (_name, sign) => {
    expect(await state()).toBe('in_progress');
    const res = await post(statusUrl(), completed(), sign());
    expect(res.status).toBe(403);
    expect(await state()).toBe('in_progress');
    const execution = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
    expect(execution).toMatchObject({ contactsInProgress: 1, contactsCompleted: 0 });
  });

  it('a connection that does not exist → 403', async () => {
    const url = `${app.baseUrl}/telephony/twilio/00000000-0000-4000-8000-000000000000/status?callId=${callId}`;
    expect((await post(url, completed(), twilio.getExpectedTwilioSignature(fake.authToken, url, completed()))).status).toBe(403);
  });

  it('a signed callback for a call we do not know → 200, nothing changed, one warn line', async () => {
    const url = `${app.baseUrl}/telephony/twilio/${campaign.connectionId}/status?callId=5e0c1a52-6f0e-4c8e-9d55-3b7b7a3f4f11`;
    const before = logs.length;
    const res = await post(url, completed(), twilio.getExpectedTwilioSignature(fake.authToken, url, completed()));
    expect(res.status).toBe(200);
    expect(await state()).toBe('in_progress');
    const warned = logs.slice(before).filter((line) => line.level === 40);
    expect(warned).toHaveLength(1);
    expect(String(warned[0].msg)).toMatch(/call we do not know/);
  });

  it('the real signed callback ends the call and counts the contact once, however often it comes', async () => {
    // Twilio's Timestamp is whole seconds, and this one is before the call was queued: the call's times stay in order.
    const [{ queued_at: queuedAt }] = await app.sql<{ queued_at: Date }>('select queued_at from calls where id = ?', [callId]);
    const params = { ...completed(), Timestamp: new Date(new Date(queuedAt).getTime() - 2000).toUTCString() };
    const signature = twilio.getExpectedTwilioSignature(fake.authToken, statusUrl(), params);
    for (let i = 0; i < 3; i++) expect((await post(statusUrl(), params, signature)).status).toBe(200);
    expect(await state()).toBe('completed');
    const execution = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
    expect(execution).toMatchObject({ status: 'completed', contactsInProgress: 0, contactsCompleted: 1 });
    const call = (await acme.rest.get(`/api/calls/${callId}`)).body;
    expect(Date.parse(call.answeredAt)).toBeGreaterThanOrEqual(Date.parse(call.queuedAt));
    expect(Date.parse(call.endedAt)).toBeGreaterThanOrEqual(Date.parse(call.answeredAt));
    // A late ringing after the end changes nothing.
    const ringing = { ...params, CallStatus: 'ringing' };
    expect((await post(statusUrl(), ringing, twilio.getExpectedTwilioSignature(fake.authToken, statusUrl(), ringing))).status).toBe(200);
    expect(await state()).toBe('completed');
  });
});

describe('pacing', () => {
  it('two runners together claim at most callsPerSecond new calls per second on one connection', async () => {
    const other = await app.organization('Paced');
    const campaign = await twilioCampaign(other, fake, { contacts: 8, callsPerSecond: 2, maxConcurrentCalls: 8 });
    fake.script(() => ({ outcome: 'busy', stepMs: 5 }));
    fake.faults({ maxCallsPerSecond: 2 });
    const runners = [testRunner(app, { intervalMs: 10, placementRetryMs: 200 }), testRunner(app, { intervalMs: 10, placementRetryMs: 200 })];
    for (const runner of runners) runner.start();
    try {
      await waitForExecution(other, campaign.executionId, (execution) => execution.status === 'completed');
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
    }
    // The promise: no second saw more than two calls claimed on the connection, whichever runner claimed them.
    const queued = (
      await app.sql<{ ms: string }>('select extract(epoch from queued_at) * 1000 as ms from calls where execution_id = ? order by queued_at', [
        campaign.executionId,
      ])
    ).map((row) => Number(row.ms));
    for (const at of queued) expect(queued.filter((other) => other >= at && other < at + 1000).length).toBeLessThanOrEqual(2);
    expect(queued[queued.length - 1] - queued[0]).toBeGreaterThanOrEqual(3000 - 50); // 8 calls at 2 per second take at least 3 seconds
    // Twilio took each contact's call once; a create it refused (429) would have been retried without a credit lost.
    const accepted = fake.calls().filter((call) => campaign.phones.includes(call.to));
    expect(new Set(accepted.map((call) => call.to)).size).toBe(8);
    expect(accepted).toHaveLength(8);
    expect((await other.rest.get(`/api/executions/${campaign.executionId}`)).body).toMatchObject({ contactsFailed: 8, creditsSpent: 8 });
  });
});

describe('waiting on the carrier', () => {
  // A runner driven by hand on a pinned clock: what it found is on the execution (both doors show the same field, see test/campaigns).

  const waiting = async (org: TestOrganization, executionId: string) => {
    const body = (await org.rest.get(`/api/executions/${executionId}`)).body;
    return { status: body.status, waitingReason: body.waitingReason, nextCallAt: body.nextCallAt };
  };

  it('Twilio answering 5xx: carrier_unavailable until the contact is tried again, then it is called', async () => {
    const org = await app.organization('Unavailable');
    const campaign = await twilioCampaign(org, fake, { contacts: 1, callsPerSecond: 20 });
    fake.script(() => ({ outcome: 'busy', stepMs: 5 }));
    fake.faults({ createStatus: 503 });
    let now = new Date('2026-03-10T12:00:00Z');
    const runner = testRunner(app, { clock: () => now, placementRetryMs: 30_000 });
    await runner.tick();
    await runner.idle();
    await runner.tick();
    expect(await waiting(org, campaign.executionId)).toEqual({
      status: 'running',
      waitingReason: 'carrier_unavailable',
      nextCallAt: '2026-03-10T12:00:30.000Z',
    });
    fake.faults({});
    now = new Date('2026-03-10T12:00:30Z');
    await runner.tick();
    await runner.idle();
    expect(await waiting(org, campaign.executionId)).toMatchObject({ waitingReason: null, nextCallAt: null });
    await fake.settled();
    await waitForExecution(org, campaign.executionId, (execution) => execution.status === 'completed');
  });

  it('its calls per second used up: carrier_pacing until the next second', async () => {
    const org = await app.organization('Paced waiting');
    const campaign = await twilioCampaign(org, fake, { contacts: 2, callsPerSecond: 1, maxConcurrentCalls: 2 });
    fake.script(() => ({ outcome: 'busy', stepMs: 5 }));
    let now = new Date('2026-03-10T12:00:00Z');
    const runner = testRunner(app, { clock: () => now });
    await runner.tick();
    await runner.idle();
    expect(await waiting(org, campaign.executionId)).toEqual({ status: 'running', waitingReason: 'carrier_pacing', nextCallAt: '2026-03-10T12:00:01.000Z' });
    expect(fake.calls().filter((call) => campaign.phones.includes(call.to))).toHaveLength(1);
    now = new Date('2026-03-10T12:00:01Z');
    await runner.tick();
    await runner.idle();
    expect(fake.calls().filter((call) => campaign.phones.includes(call.to))).toHaveLength(2);
    await fake.settled();
    await waitForExecution(org, campaign.executionId, (execution) => execution.status === 'completed');
  });
});

describe('two replicas and a kill mid-call', () => {
  it('never place two live calls to one contact: the survivor asks Twilio before anything is retried', async () => {
    const org = await app.organization('Replicas');
    const campaign = await twilioCampaign(org, fake, { contacts: 4, callsPerSecond: 50, maxConcurrentCalls: 4 });
    fake.script(() => ({ outcome: 'answered', durationSeconds: 2, stepMs: 400 }));
    fake.faults({ drop: ['completed'] }); // the ends are only known by asking
    const doomed = testRunner(app, { intervalMs: 20, leaseMs: 1000, logger: createLogger('silent') });
    await doomed.tick();
    await doomed.idle();
    await doomed.stop(0); // killed: its leases are never renewed again
    const survivor = testRunner(app, { leaseMs: 1000, intervalMs: 50 });
    survivor.start();
    try {
      await waitForExecution(org, campaign.executionId, (execution) => execution.status === 'completed');
    } finally {
      await survivor.stop();
    }
    const created = fake.calls().filter((call) => campaign.phones.includes(call.to));
    expect(created).toHaveLength(4);
    expect(new Set(created.map((call) => call.to)).size).toBe(4);
    const calls = await callsOf(campaign.executionId);
    expect(calls.map((call) => call.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect((await org.rest.get(`/api/executions/${campaign.executionId}`)).body).toMatchObject({ contactsCompleted: 4, creditsSpent: 4 });
  });
});
