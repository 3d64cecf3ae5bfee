import { ActivateProgramDocument, BindNumberDocument, CreateSimulatedProgramDocument, InboundCallsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { closedConversation, createVoiceAgent, messagesOf, twilioNumber } from './fixtures.js';
import twilio from 'twilio';
import { type FakeTwilio, startFakeTwilio } from '../support/fake-twilio.js';
import { startTwilioApp, waitForExecution } from '../telephony/fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { DEFAULT_UTTERANCES } from '../../src/modules/voice/simulated-caller.js';
import WebSocket from 'ws';
import { freePort } from '../support/pg-cluster.js';
import { operatorEnvironment, startServer, type OperatorEnvironment } from '../support/entry-points.js';
import { testRunner } from '../runner/fixtures.js';

// Voice: activation, inbound calls, the simulated voice and the speech-to-speech server, one describe each (they were one file each), each on its own app(s) and database(s).
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('activation', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  async function draftProgram(target: { agentId?: string; flowId?: string }): Promise<string> {
    const audience = await createAudience(acme, 1);
    const program = await acme.rest.post('/api/programs', { name: 'P', kind: 'campaign', audienceId: audience.id, ...target });
    expect(program.status).toBe(201);
    return program.body.id;
  }

  async function flowSpokenBy(agentId: string): Promise<string> {
    const flow = await acme.rest.post('/api/call-flows', {
      name: 'Ask',
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'q', type: 'ask', agentId, label: 'How can I help?' },
      ],
      edges: [{ from: 'start', to: 'q' }],
    });
    expect(flow.status).toBe(201);
    return flow.body.id;
  }

  /** Activation refused with 409 on both doors (two drafts, as the first door's success would change the second's answer), naming the agent and the mode. */
  async function refusedOnBothDoors(target: () => Promise<{ agentId?: string; flowId?: string }>, agentId: string, mode: RegExp) {
    const rest = await acme.rest.post(`/api/programs/${await draftProgram(await target())}/activate`);
    expect(rest.status).toBe(409);
    expect(rest.body.code).toBe('CONFLICT');
    expect(rest.body.detail).toContain(agentId);
    expect(rest.body.detail).toMatch(mode);
    const graphql = await acme.graphql.run(ActivateProgramDocument, { id: await draftProgram(await target()) });
    expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
  }

  describe('activation refuses voice pipelines that are not implemented', () => {
    it('a streaming agent is activated on the simulator, which hears and speaks through the builtin pair (no key needed)', async () => {
      const agentId = await createVoiceAgent(acme, { name: 'Streamer', voiceConfig: { pipelineMode: 'streaming', voiceId: 'alloy' } });
      expect((await acme.rest.post(`/api/programs/${await draftProgram({ agentId })}/activate`)).status).toBe(200);
    });

    it('a flow whose ask node speaks sts through google while GEMINI_API_KEY is not set: 409 naming the variable', async () => {
      const agentId = await createVoiceAgent(acme, { name: 'Gemini', voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' } });
      await refusedOnBothDoors(
        async () => ({ flowId: await flowSpokenBy(agentId) }),
        agentId,
        /pipelineMode sts with stsProvider google \(GEMINI_API_KEY is not set\)/,
      );
    });

    it('sts through openai while OPENAI_API_KEY is not set is refused the same way: 409 naming the variable', async () => {
      const agentId = await createVoiceAgent(acme, { name: 'Realtime', voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' } });
      await refusedOnBothDoors(
        async () => ({ flowId: await flowSpokenBy(agentId) }),
        agentId,
        /pipelineMode sts with stsProvider openai \(OPENAI_API_KEY is not set\)/,
      );
    });

    it('batch is activated (sts with a provider whose key is set: see the sts and sts-google files)', async () => {
      const batch = await createVoiceAgent(acme);
      expect((await acme.rest.post(`/api/programs/${await draftProgram({ agentId: batch })}/activate`)).status).toBe(200);
      const { activateProgram } = await acme.graphql.ok(ActivateProgramDocument, { id: await draftProgram({ flowId: await flowSpokenBy(batch) }) });
      expect(activateProgram.status).toBe('active');
    });
  });
});

describe('inbound', () => {
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
    app.sql<{
      id: string;
      organization_id: string;
      direction: string;
      status: string;
      from_number: string;
      conversation_id: string | null;
      duration_seconds: number | null;
    }>(
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
      expect(stored).toMatchObject({
        organization_id: acme.organizationId,
        direction: 'inbound',
        status: 'completed',
        from_number: CALLER,
        duration_seconds: 12,
      });
      expect((await messagesOf(app, stored!.conversation_id!)).map((message) => message.content)).toEqual([
        'Hello, this is Reception. How can I help you?',
        'What are your opening hours?',
        'Echo: What are your opening hours?',
      ]);
      expect(await closedConversation(acme, stored!.conversation_id!)).toMatchObject({ callId: stored!.id, status: 'ended', agentId });

      const listed = await acme.rest.get('/api/calls?direction=inbound');
      expect(listed.body.data.map((item: { id: string }) => item.id)).toContain(stored!.id);
      expect(listed.body.data.every((item: { direction: string }) => item.direction === 'inbound')).toBe(true);
      const { calls } = await acme.graphql.ok(InboundCallsDocument);
      expect(calls.data.find((item) => item.id === stored!.id)).toMatchObject({ direction: 'inbound', from: CALLER, to: number, status: 'completed' });
      expect((await globex.rest.get(`/api/calls/${stored!.id}`)).status).toBe(404);
      expect((await globex.rest.get('/api/calls?direction=inbound')).body.data).toEqual([]);
    });

    it('from a contact’s number: the agent knows the caller (its first message and the conversation’s context name them)', async () => {
      const { connectionId, numberId, number } = await twilioNumber(acme, fake);
      const existing = (await acme.rest.get(`/api/contacts?search=${encodeURIComponent(CALLER)}`)).body.data[0];
      const contact = existing ?? (await acme.rest.post('/api/contacts', { name: 'Margaret', phone: CALLER, attributes: { plan: 'gold' } })).body;
      const agentId = await createVoiceAgent(acme, {
        name: 'Desk',
        firstMessage:
          'Hello {{#contact.name}}{{contact.name}}{{/contact.name}}{{^contact.name}}there{{/contact.name}}, {{call.direction}} call to {{organization.name}}.',
      });
      expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundAgentId: agentId })).status).toBe(200);
      const call = await dialIn(connectionId, number, ['Hi']);
      expect(call.heard[0]).toBe(`Hello ${contact.name}, inbound call to Acme.`);
      const [stored] = await inboundCallsTo(number);
      const conversation = await acme.rest.get(`/api/conversations/${stored!.conversation_id}`);
      expect(conversation.body.context).toMatchObject({
        call: { direction: 'inbound', from: CALLER, to: number },
        contact: { id: contact.id, name: contact.name, phone: CALLER },
      });
    });

    it('to a number bound to a flow: the flow is spoken', async () => {
      const { connectionId, numberId, number } = await twilioNumber(acme, fake);
      const flow = await acme.rest.post('/api/call-flows', {
        name: 'Closed',
        nodes: [
          { id: 'start', type: 'start' },
          { id: 'closed', type: 'say', label: 'We are closed today.' },
          { id: 'end', type: 'end' },
        ],
        edges: [
          { from: 'start', to: 'closed' },
          { from: 'closed', to: 'end' },
        ],
      });
      expect((await acme.rest.put(`/api/phone-numbers/${numberId}`, { inboundFlowId: flow.body.id })).status).toBe(200);
      const call = await dialIn(connectionId, number);
      expect(call.heard).toEqual(['We are closed today.']);
      expect(call.hungUp).toBe(true);
      const [stored] = await app.sql<{ reached_node_ids: string[]; status: string }>(`select reached_node_ids, status from calls where to_number = ?`, [
        number,
      ]);
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
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: new URLSearchParams(params),
      });
      expect(res.status).toBe(403);
      expect(await inboundCallsTo(number)).toEqual([]);
    });
  });
});

describe('simulated-voice', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app?.close());

  async function offlineCampaign(simulatedCaller: { utterances: string[] } | undefined, contacts: number, flowId?: string) {
    const agentId = await createVoiceAgent(acme);
    const flow = flowId
      ? { status: 201, body: { id: flowId } }
      : await acme.rest.post('/api/call-flows', {
          name: 'Offline',
          nodes: [
            { id: 'start', type: 'start' },
            { id: 'greet', type: 'say', label: 'Hello from Acme.' },
            { id: 'ask', type: 'ask', agentId, label: 'Can you come on Monday?' },
            { id: 'desk', type: 'transfer', transferTo: '+14155550100' },
            { id: 'end', type: 'end' },
          ],
          edges: [
            { from: 'start', to: 'greet' },
            { from: 'greet', to: 'ask' },
            { from: 'ask', to: 'desk', condition: 'digit:0' },
            { from: 'ask', to: 'end', condition: 'said:goodbye' },
          ],
        });
    expect(flow.status).toBe(201);
    const audience = await createAudience(acme, contacts);
    const program = await acme.rest.post('/api/programs', {
      name: 'Offline voice',
      kind: 'campaign',
      flowId: flow.body.id,
      audienceId: audience.id,
      maxConcurrentCalls: 4,
      ...(simulatedCaller ? { simulatedCaller } : {}),
    });
    expect(program.status).toBe(201);
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
    await acme.grantCredits(100);
    const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
    expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
    // Every call answered by a person, so every contact talks.
    const dialer = new SimulatedDialer({ seed: 'voice', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } });
    const runner = testRunner(app, { dialer, logger: createLogger('silent'), intervalMs: 10, conversations: app.gateway.services.conversations });
    runner.start();
    try {
      await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
    } finally {
      await runner.stop();
    }
    return app.sql<{ id: string; status: string; reached_node_ids: string[]; conversation_id: string | null }>(
      'select id, status, reached_node_ids, conversation_id from calls where execution_id = ?',
      [execution.id],
    );
  }

  describe('an offline voice campaign', () => {
    it('the simulated caller says the program’s lines to the builtin agent: real transcripts, nodes walked as talked', async () => {
      const calls = await offlineCampaign({ utterances: ['Monday is fine.', 'Goodbye then'] }, 3);
      expect(calls).toHaveLength(3);
      for (const call of calls) {
        expect(call).toMatchObject({ status: 'completed', reached_node_ids: ['start', 'greet', 'ask', 'end'] });
        const messages = await messagesOf(app, call.conversation_id!);
        expect(messages.map((message) => `${message.role}: ${message.content}`)).toEqual([
          'assistant: Hello from Acme.',
          'assistant: Can you come on Monday?',
          'user: Monday is fine.',
          'assistant: Echo: Monday is fine.',
          'user: Goodbye then',
          'assistant: Echo: Goodbye then',
        ]);
        expect((await acme.rest.get(`/api/conversations/${call.conversation_id}`)).body).toMatchObject({ status: 'ended', callId: call.id });
      }
    });

    it('keys only are pressed as DTMF; without lines the seeded defaults are said', async () => {
      const [pressed] = await offlineCampaign({ utterances: ['0'] }, 1);
      expect(pressed!.reached_node_ids).toEqual(['start', 'greet', 'ask', 'desk']);
      const [seeded] = await offlineCampaign(undefined, 1);
      const said = (await messagesOf(app, seeded!.conversation_id!)).filter((message) => message.role === 'user').map((message) => message.content);
      expect(said).toEqual(DEFAULT_UTTERANCES.slice(0, said.length));
      expect(said.length).toBeGreaterThan(1);
    });

    it('resolved and unresolved edges follow the agent’s resolution criteria, judged after its answer', async () => {
      const agentId = await createVoiceAgent(acme, { resolutionCriteria: [{ label: 'Moved', description: 'The appointment was moved' }] });
      const flow = await acme.rest.post('/api/call-flows', {
        name: 'Judged',
        nodes: [
          { id: 'start', type: 'start' },
          { id: 'ask', type: 'ask', agentId, label: 'What can I do?' },
          { id: 'done', type: 'say', label: 'Great.' },
          { id: 'retry', type: 'say', label: 'Let me get someone.' },
        ],
        edges: [
          { from: 'start', to: 'ask' },
          { from: 'ask', to: 'done', condition: 'resolved' },
          { from: 'ask', to: 'retry', condition: 'unresolved' },
        ],
      });
      expect(flow.status).toBe(201);
      // builtin/echo answers the judge with "Echo: …", never "yes": unresolved.
      const calls = await offlineCampaign({ utterances: ['Please move it'] }, 1, flow.body.id);
      expect(calls[0]!.reached_node_ids).toEqual(['start', 'ask', 'retry']);
    });

    it('simulatedCaller is read and checked on both doors', async () => {
      const audience = await createAudience(acme, 1);
      const agentId = await createVoiceAgent(acme);
      const input = { name: 'P', kind: 'campaign', agentId, audienceId: audience.id, simulatedCaller: { utterances: ['Hi'] } };
      const { createProgram } = await acme.graphql.ok(CreateSimulatedProgramDocument, { input: input as never });
      expect(createProgram.simulatedCaller).toEqual({ utterances: ['Hi'] });
      expect((await acme.rest.get(`/api/programs/${createProgram.id}`)).body.simulatedCaller).toEqual({ utterances: ['Hi'] });
      for (const utterances of [[], [''], Array.from({ length: 21 }, () => 'x'), ['x'.repeat(501)]]) {
        const bad = { ...input, simulatedCaller: { utterances } };
        const rest = await acme.rest.post('/api/programs', bad);
        expect(rest.status).toBe(400);
        expect(rest.body.errors[0].field).toMatch(/^simulatedCaller\.utterances/);
        const graphql = await acme.graphql.run(CreateSimulatedProgramDocument, { input: bad as never });
        expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      }
    });
  });
});

describe('sts-server', () => {
  // The built server as `npm start` runs it (pretest builds dist/): main.ts attaches the media route
  // to the server it listens with, so carrier media streams are checked there too.

  let operator: OperatorEnvironment;

  beforeAll(async () => {
    operator = await operatorEnvironment('sts-server');
  });
  afterAll(() => operator.drop());

  function upgrade(url: string, headers: Record<string, string> = {}): Promise<number | 'open'> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.once('open', () => {
        resolve('open');
        socket.terminate();
      });
      socket.once('error', (error) => (error.message.includes('closed before') ? undefined : reject(error)));
    });
  }

  it('refuses an unsigned or forged media stream (403) and an upgrade elsewhere (404), leaves /graphql to subscriptions, then stops on SIGTERM', async () => {
    const port = await freePort();
    const server = await startServer({ ...operator.env, RUNNER_ENABLED: 'false', PUBLIC_URL: `http://127.0.0.1:${port}` }, { port });
    try {
      // A call's stream URL (its id and nonce) unsigned or forged, and the bare /media of before.
      const bare = `ws://127.0.0.1:${port}/telephony/twilio/3f1c7c8e-0000-4000-8000-000000000000/media`;
      const media = `${bare}/8d5b3a30-0000-4000-8000-000000000000/${'n'.repeat(43)}`;
      expect(await upgrade(media)).toBe(403);
      expect(await upgrade(media, { 'X-Twilio-Signature': 'forged' })).toBe(403);
      expect(await upgrade(bare, { 'X-Twilio-Signature': 'forged' })).toBe(403);
      expect(await upgrade(`ws://127.0.0.1:${port}/elsewhere`)).toBe(404);
      // /graphql upgrades belong to GraphQL subscriptions (graphql-ws), served by the same server.
      expect(await upgrade(`ws://127.0.0.1:${port}/graphql`)).toBe('open');
      const output = await server.outputWith('"reason":"no call and nonce in its URL","msg":"media stream refused"');
      expect(output).toContain('"reason":"no valid signature for this connection","msg":"media stream refused"');
      expect(output).toContain('"reason":"no call and nonce in its URL","msg":"media stream refused"');
      expect(output).not.toContain('n'.repeat(43));
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
  }, 120_000);
});
