import { PlaceCallDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAgent, createFlow } from '../programs/fixtures.js';
import { gatewayRunnerOptions } from '../../src/modules/programs/runner/gateway-runner.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { loadConfig } from '../../src/config.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { testRunner } from '../runner/fixtures.js';
import { claimDirectCalls } from '../../src/modules/programs/runner/direct-calls.js';
import { ProgramCarrier } from '../../src/modules/telephony/telephony.enums.js';

// POST /api/calls and GraphQL placeCall (issue 42): one call in one request, checked as a campaign's
// call is, queued and paid at once, placed by the runner, its progress as any call's.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let runner: CampaignRunner;
let agentId: string;
const dialer = new SimulatedDialer({ speedMs: 0 });
let serial = 0;

/** A fresh number whose first simulated call has `outcome` (the seeded dialer decides by number). */
function numberWith(outcome: 'answered' | 'busy' | 'no_answer' | 'failed' | 'voicemail'): string {
  for (;;) {
    const phone = `+1646${String(1_000_000 + ++serial * 7).padStart(7, '0')}`;
    if (dialer.outcomeOf(phone, 1) === outcome) return phone;
  }
}

const balance = async (org: TestOrganization): Promise<number> => (await org.rest.get('/api/organization')).body.creditBalance;

/** Ticks the runner until the call is in a final status (each tick waits for the calls it placed). */
async function untilEnded(org: TestOrganization, id: string): Promise<Record<string, any>> {
  for (let tick = 0; tick < 20; tick++) {
    await runner.tick();
    await runner.idle();
    const call = (await org.rest.get(`/api/calls/${id}`)).body;
    if (!['queued', 'ringing', 'in_progress'].includes(call.status)) return call;
  }
  throw new Error(`call ${id} did not end in 20 ticks`);
}

beforeAll(async () => {
  const config = loadConfig({ JWT_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/gateway-test-unused' });
  app = await startTestApp({ runner: { ...config.runner, directCallsMax: 3 } });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  await acme.grantCredits(100);
  await other.grantCredits(100);
  agentId = await createAgent(acme);
  // The served runner's wiring, answered simulated calls talked through the voice engine.
  runner = testRunner(app, { dialer, ...gatewayRunnerOptions(app.gateway.services, { publicUrl: app.baseUrl, talkSimulatedCalls: true }) });
}, 60_000);
afterAll(async () => {
  await runner?.stop(0);
  await app?.close();
});

describe('POST /api/calls', () => {
  it('answers 201 with the queued call, spends one credit, and the runner places it: it ends with its conversation, its variables and its events', async () => {
    const agent = await acme.rest.post('/api/agents', {
      name: 'Reminder',
      instructions: 'Remind {{customer}} of the appointment.',
      firstMessage: 'Hello {{customer}}, this is Acme.',
      variables: [{ name: 'customer' }],
      modelConfig: { model: 'builtin/echo' },
    });
    expect(agent.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    const to = numberWith('answered');
    const before = await balance(acme);

    const placed = await acme.rest.post('/api/calls', { to, agentId: agent.body.id, variables: { customer: 'Ada' } });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({
      status: 'queued',
      direction: 'outbound',
      to,
      executionId: null,
      agentId: agent.body.id,
      carrier: 'simulator',
      creditsCharged: 1,
      recording: null,
    });
    expect(await balance(acme)).toBe(before - 1);

    const ended = await untilEnded(acme, placed.body.id);
    expect(ended).toMatchObject({ status: 'completed', outcome: 'answered', creditsCharged: 1 });
    expect(ended.conversationId).toEqual(expect.any(String));
    // The agent's templates were filled from the call's own variables.
    const [conversation] = await app.sql<{ context: any }>('select context from conversations where id = ?', [ended.conversationId]);
    const context = typeof conversation!.context === 'string' ? JSON.parse(conversation!.context) : conversation!.context;
    expect(context.variables).toMatchObject({ customer: 'Ada' });
    expect(context.call).toMatchObject({ id: placed.body.id, direction: 'outbound', to });
    const events = await app.sql<{ type: string }>(`select type from events where organization_id = ? and payload ->> 'id' = ? order by created_at`, [
      acme.organizationId,
      placed.body.id,
    ]);
    expect(events.map((event) => event.type)).toEqual(['call.started', 'call.ended']);
    expect(await balance(acme)).toBe(before - 1);
  }, 60_000);

  it('places a call through a flow on GraphQL, and links it to the contact whose number it is', async () => {
    const flowId = await createFlow(acme, agentId);
    const to = numberWith('answered');
    const contact = await acme.rest.post('/api/contacts', { name: 'Grace', phone: to });
    expect(contact.status).toBe(201);
    const placed = await acme.graphql.ok(PlaceCallDocument, { input: { to, flowId } });
    expect(placed.placeCall).toMatchObject({ status: 'queued', to, contactId: contact.body.id, executionId: null, creditsCharged: 1 });
    const ended = await untilEnded(acme, placed.placeCall.id);
    expect(ended).toMatchObject({ status: 'completed', outcome: 'answered' });
    expect(ended.reachedNodeIds).toContain('start');
  }, 60_000);

  it('keeps the credit of a call the carrier took, even one that found the line busy', async () => {
    const busy = numberWith('busy');
    const before = await balance(acme);
    const placed = await acme.rest.post('/api/calls', { to: busy, agentId });
    expect(placed.status).toBe(201);
    const ended = await untilEnded(acme, placed.body.id);
    // A busy line was placed: the carrier took the call, which costs its credit as a campaign's does.
    expect(ended).toMatchObject({ status: 'busy', outcome: 'busy', creditsCharged: 1 });
    expect(await balance(acme)).toBe(before - 1);
  }, 60_000);

  it('replays the first answer for the same Idempotency-Key, with one call and one credit', async () => {
    const to = numberWith('answered');
    const before = await balance(acme);
    const keyed = acme.rest.with({ 'idempotency-key': `call-${to}` });
    const first = await keyed.post('/api/calls', { to, agentId });
    const again = await keyed.post('/api/calls', { to, agentId });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(await app.sql('select id from calls where to_number = ?', [to])).toHaveLength(1);
    expect(await balance(acme)).toBe(before - 1);
    await untilEnded(acme, first.body.id);
  }, 60_000);
});

describe('a runner that took a single call and died', () => {
  it('leaves it to another runner once its lease ran out: the carrier has no record of it, so it fails and its credit comes back', async () => {
    const before = await balance(acme);
    const placed = await acme.rest.post('/api/calls', { to: numberWith('answered'), agentId });
    expect(placed.status).toBe(201);
    // Taken for a runner that stops before placing it (its process died).
    const taken = await claimDirectCalls(app.db.database.em.fork() as never, {
      token: 'gone-runner#1',
      carriers: [ProgramCarrier.simulator],
      leaseMs: 60_000,
      leaseClock: new Date(),
    });
    expect(taken.map((call) => call.callId)).toEqual([placed.body.id]);
    // The other runners do not place a call another holds…
    await runner.tick();
    await runner.idle();
    expect((await acme.rest.get(`/api/calls/${placed.body.id}`)).body.status).toBe('queued');
    // …until its lease has run out on their clock: then the carrier is asked, which never heard of it.
    const later = testRunner(app, { dialer, clock: () => new Date(Date.now() + 120_000) });
    await later.tick();
    await later.idle();
    const ended = (await acme.rest.get(`/api/calls/${placed.body.id}`)).body;
    expect(ended).toMatchObject({ status: 'failed', outcome: 'failed', creditsCharged: 0 });
    expect(ended.errorText).toMatch(/no record/);
    expect(await balance(acme)).toBe(before);
  }, 60_000);
});

describe('what a single call is refused for', () => {
  /** REST's status and code, and GraphQL's code, for the same input. */
  async function refusal(
    org: TestOrganization,
    input: Record<string, unknown>,
  ): Promise<{ status: number; code: string; graphql: string | undefined; fields: string[] }> {
    const rest = await org.rest.post('/api/calls', input);
    const graphql = await org.graphql.run(PlaceCallDocument, { input: input as never });
    expect(graphql.data?.placeCall ?? null).toBeNull();
    return {
      status: rest.status,
      code: rest.body.code,
      graphql: graphql.errors?.[0]?.extensions?.code as string | undefined,
      fields: (rest.body.errors ?? []).map((error: { field: string }) => error.field),
    };
  }

  it('answers the same error on both doors for bad input, and writes nothing', async () => {
    const before = await balance(acme);
    expect(await refusal(acme, { to: '4155550100', agentId })).toEqual({ status: 400, code: 'BAD_USER_INPUT', graphql: 'BAD_USER_INPUT', fields: ['to'] });
    expect(await refusal(acme, { to: '+14155550100' })).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', graphql: 'BAD_USER_INPUT', fields: ['agentId'] });
    expect(await refusal(acme, { to: '+14155550100', agentId, flowId: agentId })).toMatchObject({ status: 400, graphql: 'BAD_USER_INPUT' });
    expect(await refusal(acme, { to: '+14155550100', agentId, variables: { 'not a name': 'x' } })).toMatchObject({
      status: 400,
      graphql: 'BAD_USER_INPUT',
      fields: ['variables'],
    });
    expect(await refusal(acme, { to: '+14155550100', agentId, carrier: 'pigeon' })).toMatchObject({ status: 400, graphql: 'BAD_USER_INPUT' });
    expect(await app.sql('select id from calls where to_number = ?', ['+14155550100'])).toHaveLength(0);
    expect(await balance(acme)).toBe(before);
  });

  it('answers 404 for another organization’s agent, flow or number, on both doors', async () => {
    const theirAgent = await createAgent(other);
    const theirFlow = await createFlow(other, theirAgent);
    const theirNumber = await other.rest.post('/api/phone-numbers', { number: '+14155559876' });
    expect(theirNumber.status).toBe(201);
    expect(await refusal(acme, { to: '+14155550101', agentId: theirAgent })).toMatchObject({ status: 404, code: 'NOT_FOUND', graphql: 'NOT_FOUND' });
    expect(await refusal(acme, { to: '+14155550101', flowId: theirFlow })).toMatchObject({ status: 404, code: 'NOT_FOUND', graphql: 'NOT_FOUND' });
    expect(await refusal(acme, { to: '+14155550101', agentId, from: '+14155559876' })).toMatchObject({ status: 404, code: 'NOT_FOUND', graphql: 'NOT_FOUND' });
    // And another organization does not read the call.
    const placed = await acme.rest.post('/api/calls', { to: numberWith('answered'), agentId });
    expect((await other.rest.get(`/api/calls/${placed.body.id}`)).status).toBe(404);
    await untilEnded(acme, placed.body.id);
  });

  it('refuses a number on the do-not-call list, a contact who opted out, a draft agent and a missing variable with 409 on both doors, spending nothing', async () => {
    const before = await balance(acme);
    expect((await acme.rest.post('/api/do-not-call', { phone: '+14155550102' })).status).toBe(201);
    expect(await refusal(acme, { to: '+14155550102', agentId })).toMatchObject({ status: 409, code: 'CONFLICT', graphql: 'CONFLICT' });
    expect((await acme.rest.post('/api/contacts', { phone: '+14155550103', optedOut: true })).status).toBe(201);
    expect(await refusal(acme, { to: '+14155550103', agentId })).toMatchObject({ status: 409, graphql: 'CONFLICT' });
    const draft = await createAgent(acme, { draft: true });
    expect(await refusal(acme, { to: '+14155550104', agentId: draft })).toMatchObject({ status: 409, graphql: 'CONFLICT' });
    const templated = await acme.rest.post('/api/agents', {
      name: 'Needs a name',
      instructions: 'Greet {{customer}}.',
      variables: [{ name: 'customer' }],
      modelConfig: { model: 'builtin/echo' },
    });
    expect((await acme.rest.post(`/api/agents/${templated.body.id}/activate`)).status).toBe(200);
    expect(await refusal(acme, { to: '+14155550105', agentId: templated.body.id })).toEqual({
      status: 409,
      code: 'CONFLICT',
      graphql: 'CONFLICT',
      fields: ['variables.customer'],
    });
    expect(await app.sql(`select id from calls where organization_id = ? and to_number like '+1415555010%'`, [acme.organizationId])).toHaveLength(0);
    expect(await balance(acme)).toBe(before);
  });

  it('refuses a call without credits with 409', async () => {
    const poor = await app.organization('Poor');
    const poorAgent = await createAgent(poor);
    expect(await refusal(poor, { to: '+14155550106', agentId: poorAgent })).toMatchObject({ status: 409, code: 'CONFLICT', graphql: 'CONFLICT' });
  });

  it('holds DIRECT_CALLS_MAX and one call per number under a burst', async () => {
    const busy = await app.organization('Busy');
    await busy.grantCredits(100);
    const busyAgent = await createAgent(busy);
    const before = await balance(busy);
    // Eight at once, the runner not ticked: three fit (DIRECT_CALLS_MAX=3 here), and a number already on a call is refused.
    const numbers = Array.from({ length: 8 }, () => numberWith('answered'));
    const answers = await Promise.all(numbers.map((to) => busy.rest.post('/api/calls', { to, agentId: busyAgent })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(3);
    expect(answers.filter((answer) => answer.status === 409).map((answer) => answer.body.code)).toEqual(Array(5).fill('CONFLICT'));
    expect(await balance(busy)).toBe(before - 3);
    const live = answers.find((answer) => answer.status === 201)!;
    for (const placed of answers.filter((answer) => answer.status === 201)) await untilEnded(busy, placed.body.id);
    const again = await busy.rest.post('/api/calls', { to: live.body.to, agentId: busyAgent });
    expect(again.status).toBe(201);
    const twice = await busy.rest.post('/api/calls', { to: live.body.to, agentId: busyAgent });
    expect(twice).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(twice.body.detail).toMatch(/already on a call/);
    await untilEnded(busy, again.body.id);
  }, 60_000);
});
