import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { createAgent } from '../programs/fixtures.js';
import { startTwilioApp } from './fixtures.js';
import { testRunner } from '../runner/fixtures.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';

// A single call (POST /api/calls) on a real carrier: the fake Twilio checks what the gateway sends
// against Twilio's OpenAPI (test/support), reports the call's progress to PUBLIC_URL, and refuses or
// fails a create on demand.

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;
let runner: CampaignRunner;
let agentId: string;
let from: string;

const balance = async (): Promise<number> => (await acme.rest.get('/api/organization')).body.creditBalance;

/** Ticks the runner until the call is final; the carrier's callbacks arrive on their own, so each read waits a moment between ticks. */
async function untilEnded(id: string): Promise<Record<string, any>> {
  const until = Date.now() + 20_000;
  for (;;) {
    await runner.tick();
    await runner.idle();
    const call = (await acme.rest.get(`/api/calls/${id}`)).body;
    if (!['queued', 'ringing', 'in_progress'].includes(call.status)) return call;
    if (Date.now() > until) throw new Error(`call not final in time: ${JSON.stringify(call)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTwilioApp(fake);
  acme = await app.organization('Acme');
  await acme.grantCredits(10);
  agentId = await createAgent(acme);
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
  expect(connection.status).toBe(201);
  from = '+14155550777';
  expect((await acme.rest.post('/api/phone-numbers', { number: from, carrierConnectionId: connection.body.id })).status).toBe(201);
  runner = testRunner(app);
}, 60_000);
afterAll(async () => {
  await runner?.stop(0);
  await app?.close();
  await fake?.close();
});
afterEach(() => fake.faults({}));

it('places the call through the from number’s Twilio connection, and records what Twilio reports', async () => {
  fake.script(() => ({ outcome: 'answered', durationSeconds: 7, stepMs: 5 }));
  const placed = await acme.rest.post('/api/calls', { to: '+14155550123', agentId, from });
  expect(placed.status).toBe(201);
  expect(placed.body).toMatchObject({
    status: 'queued',
    carrier: 'twilio',
    from,
    to: '+14155550123',
    carrierConnectionId: expect.any(String),
    creditsCharged: 1,
  });
  const ended = await untilEnded(placed.body.id);
  expect(ended).toMatchObject({
    status: 'completed',
    outcome: 'answered',
    durationSeconds: 7,
    creditsCharged: 1,
    carrierCallId: expect.stringMatching(/^CA[0-9a-f]{32}$/),
  });
  const created = fake.calls().find((call) => call.sid === ended.carrierCallId)!;
  expect(created).toMatchObject({ to: '+14155550123', from });
});

it('gives the credit back when Twilio never takes the call (5xx) or refuses it (4xx): the call fails with the reason', async () => {
  for (const status of [503, 400]) {
    const before = await balance();
    fake.faults({ createStatus: status });
    const placed = await acme.rest.post('/api/calls', { to: `+1415555${status}0`, agentId, from });
    expect(placed.status).toBe(201);
    expect(await balance()).toBe(before - 1);
    const ended = await untilEnded(placed.body.id);
    expect(ended).toMatchObject({ status: 'failed', outcome: 'failed', creditsCharged: 0, carrierCallId: null });
    expect(ended.errorText).toEqual(expect.any(String));
    expect(await balance()).toBe(before);
  }
});

it('refuses a real-carrier call without a from number, and one whose from has no connection of that carrier, with 409', async () => {
  const none = await acme.rest.post('/api/calls', { to: '+14155550124', agentId, carrier: 'twilio' });
  expect(none).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  expect((await acme.rest.post('/api/phone-numbers', { number: '+14155550778' })).status).toBe(201);
  const bare = await acme.rest.post('/api/calls', { to: '+14155550124', agentId, from: '+14155550778', carrier: 'twilio' });
  expect(bare).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  // Without carrier, a number without a connection calls through the simulator.
  const simulated = await acme.rest.post('/api/calls', { to: '+14155550124', agentId, from: '+14155550778' });
  expect(simulated).toMatchObject({ status: 201, body: { carrier: 'simulator', from: '+14155550778' } });
  await untilEnded(simulated.body.id);
});
