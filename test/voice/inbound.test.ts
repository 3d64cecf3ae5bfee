import twilio from 'twilio';
import { BindNumberDocument, InboundCallsDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { closedConversation, createVoiceAgent, messagesOf, twilioNumber } from './fixtures.js';

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;
let globex: TestOrganization;

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTwilioApp(fake);
  acme = await app.organization('Acme');
  globex = await app.organization('Globex');
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

const CALLER = '+15551230000';
const UNBOUND = 'Sorry, this number does not take calls. Goodbye.';

function dialIn(connectionId: string, to: string, turns: string[] = []) {
  const base = `${app.baseUrl}/telephony/twilio/${connectionId}`;
  return fake.dialIn({ to, from: CALLER, url: `${base}/inbound`, statusCallback: `${base}/status`, turns, durationSeconds: 12 });
}

const inboundCallsTo = (number: string) =>
  app.sql<{ id: string; organization_id: string; direction: string; status: string; from_number: string; conversation_id: string | null; duration_seconds: number | null }>(
    `select id, organization_id, direction, status, from_number, conversation_id, duration_seconds from calls where to_number = ? and direction = 'inbound'`,
    [number],
  );

describe('binding a number for inbound calls', () => {
  it('takes an agent or a flow of the organization, never both, on both doors', async () => {
    const { numberId } = await twilioNumber(acme, fake);
    const agentId = await createVoiceAgent(acme);
    const flow = await acme.rest.post('/api/call-flows', { name: 'F', nodes: [{ id: 'start', type: 'start' }] });
    const bound = await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundAgentId: agentId });
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({ inboundAgentId: agentId, inboundFlowId: null });

    // Both at once (or a flow while the agent stays) → 400 naming inboundFlowId, on both doors.
    for (const input of [{ inboundFlowId: flow.body.id }, { inboundAgentId: agentId, inboundFlowId: flow.body.id }]) {
      const rest = await acme.rest.put(`/api/phone-numbers/${numberId}`, input);
      expect(rest.status).toBe(400);
      expect(rest.body.errors.map((error: { field: string }) => error.field)).toEqual(['inboundFlowId']);
      const graphql = await acme.graphql.run(BindNumberDocument, { id: numberId, input });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
    const { updatePhoneNumber } = await acme.graphql.ok(BindNumberDocument, { id: numberId, input: { inboundAgentId: null, inboundFlowId: flow.body.id } });
    expect(updatePhoneNumber).toMatchObject({ inboundAgentId: null, inboundFlowId: flow.body.id });

    // Another organization's agent or flow → 404 on both doors, nothing changed.
    const foreignAgent = await createVoiceAgent(globex);
    const foreignFlow = await globex.rest.post('/api/call-flows', { name: 'G', nodes: [{ id: 'start', type: 'start' }] });
    for (const input of [{ inboundFlowId: null, inboundAgentId: foreignAgent }, { inboundFlowId: foreignFlow.body.id }]) {
      expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, input)).status).toBe(404);
      expect((await acme.graphql.run(BindNumberDocument, { id: numberId, input })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    expect((await acme.rest.get(`/api/phone-numbers/${numberId}`)).body).toMatchObject({ inboundAgentId: null, inboundFlowId: flow.body.id });
  });
});

describe('a call comes in', () => {
  it('to a number bound to an agent: an inbound call, a conversation with the agent, the end recorded, listed on both doors', async () => {
    const { connectionId, numberId, number } = await twilioNumber(acme, fake);
    const agentId = await createVoiceAgent(acme, { name: 'Reception' });
    expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundAgentId: agentId })).status).toBe(200);
    const call = await dialIn(connectionId, number, ['What are your opening hours?']);
    expect(call.heard).toEqual([
      'Hello, this is Reception. How can I help you?',
      'One moment.',
      'Echo: What are your opening hours?',
      'Sorry, I did not hear you.',
      'I did not hear anything, so I will end the call now. Goodbye.',
    ]);
    const [stored] = await inboundCallsTo(number);
    expect(stored).toMatchObject({ organization_id: acme.organizationId, direction: 'inbound', status: 'completed', from_number: CALLER, duration_seconds: 12 });
    expect((await messagesOf(app, stored!.conversation_id!)).map((message) => message.content)).toEqual(['What are your opening hours?', 'Echo: What are your opening hours?']);
    expect(await closedConversation(acme, stored!.conversation_id!)).toMatchObject({ callId: stored!.id, status: 'ended', agentId });

    const listed = await acme.rest.get('/api/calls?direction=inbound');
    expect(listed.body.data.map((item: { id: string }) => item.id)).toContain(stored!.id);
    expect(listed.body.data.every((item: { direction: string }) => item.direction === 'inbound')).toBe(true);
    const { calls } = await acme.graphql.ok(InboundCallsDocument);
    expect(calls.data.find((item) => item.id === stored!.id)).toMatchObject({ direction: 'inbound', from: CALLER, to: number, status: 'completed' });
    expect((await globex.rest.get(`/api/calls/${stored!.id}`)).status).toBe(404);
    expect((await globex.rest.get('/api/calls?direction=inbound')).body.data).toEqual([]);
  });

  it('to a number bound to a flow: the flow is spoken', async () => {
    const { connectionId, numberId, number } = await twilioNumber(acme, fake);
    const flow = await acme.rest.post('/api/call-flows', {
      name: 'Closed',
      nodes: [{ id: 'start', type: 'start' }, { id: 'closed', type: 'say', label: 'We are closed today.' }, { id: 'end', type: 'end' }],
      edges: [{ from: 'start', to: 'closed' }, { from: 'closed', to: 'end' }],
    });
    expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundFlowId: flow.body.id })).status).toBe(200);
    const call = await dialIn(connectionId, number);
    expect(call.heard).toEqual(['We are closed today.']);
    expect(call.hungUp).toBe(true);
    const [stored] = await app.sql<{ reached_node_ids: string[]; status: string }>(`select reached_node_ids, status from calls where to_number = ?`, [number]);
    expect(stored).toEqual({ reached_node_ids: ['start', 'closed', 'end'], status: 'completed' });
  });

  it('to a number bound to nothing, or one we do not know: a short spoken refusal', async () => {
    const { connectionId, number } = await twilioNumber(acme, fake);
    const unbound = await dialIn(connectionId, number);
    expect(unbound.heard).toEqual([UNBOUND]);
    expect(unbound.hungUp).toBe(true);
    expect(await inboundCallsTo(number)).toMatchObject([{ status: 'completed', conversation_id: null }]);
    const unknown = await dialIn(connectionId, '+15559990000');
    expect(unknown.heard).toEqual([UNBOUND]);
    expect(await inboundCallsTo('+15559990000')).toEqual([]);
  });

  it('a forged inbound webhook is refused and records nothing', async () => {
    const { connectionId, numberId, number } = await twilioNumber(acme, fake);
    expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundAgentId: await createVoiceAgent(acme) })).status).toBe(200);
    const url = `${app.baseUrl}/telephony/twilio/${connectionId}/inbound`;
    const params = { CallSid: 'CA0123', To: number, From: CALLER };
    const signature = twilio.getExpectedTwilioSignature('0'.repeat(32), url, params);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, body: new URLSearchParams(params) });
    expect(res.status).toBe(403);
    expect(await inboundCallsTo(number)).toEqual([]);
  });
});
