import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { messagesOf } from '../voice/fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { WORDS } from '../../src/modules/voice/voice-actions.js';
import { testRunner } from '../runner/fixtures.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { eventually, stsHelpers } from '../voice/sts-fixtures.js';
import { BusinessEndpoint } from './business.js';
import { createTool, startToolsApp } from './fixtures.js';

// The agent's own tools on the phone, in every pipeline: batch and streaming through the text path
// on the simulator (offline, builtin/echo calling the tool a caller's line names), and speech to
// speech on the OpenAI Realtime and Gemini Live doubles, whose models call the function and speak to
// its answer. Each tool request reaches the business endpoint signed, with the call and its contact;
// each call is recorded in order with the turns. PGlite, and PostgreSQL with TEST_DATABASE_URL.

let business: BusinessEndpoint;
beforeAll(async () => {
  business = await new BusinessEndpoint().start();
});
afterAll(() => business?.close());
beforeEach(() => {
  business.received.length = 0;
  business.behave = () => ({ json: { eta: 'Monday' } });
});

describe('on the simulator (batch and streaming, the text path)', () => {
  let app: TestApp;
  let acme: TestOrganization;
  beforeAll(async () => {
    app = await startToolsApp();
    acme = await app.organization('Acme phone tools');
  });
  afterAll(() => app?.close());

  async function campaign(agentFields: Record<string, unknown>, utterances: string[]) {
    const tool = await createTool(acme, `${business.url}/orders`, { name: `lookup_${Math.random().toString(36).slice(2, 8)}`, timeoutMs: 2500 });
    business.secrets = [tool.secret];
    const agent = await acme.rest.post('/api/agents', {
      name: 'Order line',
      instructions: 'You look orders up.',
      modelConfig: { model: 'builtin/echo' },
      toolIds: [tool.id],
      ...agentFields,
    });
    expect(agent.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    const audience = await createAudience(acme, 1);
    const lines = utterances.map((line) => line.replace('TOOL', tool.name));
    const program = await acme.rest.post('/api/programs', {
      name: 'Orders',
      kind: 'campaign',
      agentId: agent.body.id,
      audienceId: audience.id,
      maxConcurrentCalls: 1,
      simulatedCaller: { utterances: lines },
    });
    expect(program.status).toBe(201);
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
    await acme.grantCredits(10);
    const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
    expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
    const dialer = new SimulatedDialer({ seed: 'tools', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } });
    const runner = testRunner(app, { dialer, logger: createLogger('silent'), intervalMs: 10, conversations: app.gateway.services.conversations });
    runner.start();
    try {
      await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
    } finally {
      await runner.stop();
    }
    const [call] = await app.sql<{ id: string; conversation_id: string; from_number: string; to_number: string; contact_id: string }>(
      'select id, conversation_id, from_number, to_number, contact_id from calls where execution_id = ?',
      [execution.id],
    );
    const csv = await acme.rest.request('GET', `/api/executions/${execution.id}/calls.csv`);
    return { tool, call: call!, contactId: audience.contactIds[0]!, csv: String(csv.body), messages: await messagesOf(app, call!.conversation_id) };
  }

  it.each([
    ['batch', {}],
    ['streaming', { voiceConfig: { pipelineMode: 'streaming' } }],
  ])(
    '%s: the caller’s turn calls the tool with the call and its contact, the answer is spoken, and the record is in order on the call’s conversation and its CSV row',
    async (_mode, fields) => {
      const { tool, call, contactId, csv, messages } = await campaign(fields, ['call TOOL {"orderId": "A1"}', 'Thank you, goodbye.']);
      expect(business.received).toHaveLength(1);
      const [request] = business.received;
      expect(request!.verifiedWith).toEqual([0]);
      expect(request!.parsed).toMatchObject({
        tool: tool.name,
        arguments: { orderId: 'A1' },
        call: { id: call.id, direction: 'outbound', from: call.from_number, to: call.to_number },
        contact: { id: contactId, phone: call.to_number, name: expect.stringMatching(/^Person /) },
        conversationId: call.conversation_id,
      });
      const said = messages.map((message) => message.content);
      const answered = said.indexOf(`Echo: ${tool.name} answered {"eta":"Monday"}`);
      expect(answered).toBeGreaterThan(0);
      expect(said[answered - 1]).toBe(`call ${tool.name} {"orderId": "A1"}`);
      const calls = (await acme.rest.get(`/api/conversations/${call.conversation_id}/tool-calls`)).body.data as Record<string, unknown>[];
      expect(calls).toHaveLength(1);
      // Right after the caller's turn that asked for it (its sequence), before the reply.
      expect(calls[0]).toMatchObject({ tool: tool.name, status: 'succeeded', callId: call.id, afterSequence: answered });
      const [header, row] = csv.trim().split('\r\n');
      const column = header!.split(',').indexOf('toolCalls');
      expect(column).toBeGreaterThan(0);
      expect(row!.split(',')[column]).toBe('1');
    },
    90_000,
  );

  it('streaming: while a tool runs past the filler threshold the caller hears the filler, before the tool’s deadline ends it', async () => {
    business.behave = () => 'hang';
    const { tool, call, messages } = await campaign({ voiceConfig: { pipelineMode: 'streaming' } }, ['call TOOL {"orderId": "A1"}', 'Thank you, goodbye.']);
    // The caller spoke on after the filler and hung up; the tool's call still ends at its deadline and is recorded.
    const calls = (
      await eventually(
        () => acme.rest.get(`/api/conversations/${call.conversation_id}/tool-calls`),
        (res) => res.body.data.length === 1,
        'the tool call’s record',
      )
    ).body.data;
    expect(calls[0]).toMatchObject({ tool: tool.name, status: 'failed', error: 'the tool did not answer within 2500 ms' });
    expect(calls[0].durationMs).toBeGreaterThanOrEqual(2500);
    // The turn's first audio (the filler, at 1500 ms) reached the caller before the tool's 2500 ms deadline
    // ran out; the filler is the gateway's, never stored as the model's words.
    const latency = (await acme.rest.get(`/api/calls/${call.id}`)).body.turnLatency;
    const asked = latency.turns[0];
    expect(asked.totalMs).toBeGreaterThanOrEqual(1500);
    expect(asked.totalMs).toBeLessThan(2500);
    expect(messages.map((message) => message.content).some((line) => line.startsWith(WORDS.filler))).toBe(false);
  }, 90_000);
});

describe('speech to speech (OpenAI Realtime and Gemini Live doubles)', () => {
  let twilioFake: FakeTwilio;
  let realtime: FakeRealtime;
  let gemini: FakeGeminiLive;
  let app: TestApp;
  let acme: TestOrganization;
  let connectionId: string;
  let contactId: string;
  const GEMINI_KEY = 'gemini-tools-key';

  beforeAll(async () => {
    twilioFake = await startFakeTwilio();
    realtime = await startFakeRealtime();
    gemini = await startFakeGeminiLive(GEMINI_KEY);
    app = await startTwilioApp(twilioFake, undefined, {
      providers: { openaiApiKey: 'sk-test-realtime-key', openaiRealtimeUrl: realtime.url, geminiApiKey: GEMINI_KEY, geminiBaseUrl: gemini.baseUrl },
      tools: { allowPrivate: true, mcpRefreshMs: 600_000 },
    });
    acme = await app.organization('Acme sts tools');
    const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
    connectionId = connection.body.id;
    contactId = (await createAudience(acme, 1)).contactIds[0]!;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await realtime?.close();
    await gemini?.close();
    await twilioFake?.close();
  });
  afterEach(() => {
    expect(realtime.problems).toEqual([]);
    expect(gemini.problems).toEqual([]);
  });

  const helpers = stsHelpers(() => ({ app, twilioFake, acme }));

  async function stsAgent(provider: 'openai' | 'google', toolId: string): Promise<string> {
    const agent = await acme.rest.post('/api/agents', {
      name: `Orders on ${provider}`,
      instructions: 'You look orders up for callers.',
      modelConfig: { model: provider === 'openai' ? 'openai/gpt-realtime' : 'google/gemini-3.8-live' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: provider },
      firstMessageMode: 'wait_for_caller',
      toolIds: [toolId],
    });
    expect(agent.status).toBe(201);
    return agent.body.id as string;
  }

  async function openCall(agentId: string) {
    const callId = await helpers.liveCall({ org: acme, agentId, contactId, connectionId });
    const { url, callSid } = await helpers.answeredStream(callId);
    const caller = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(caller instanceof MediaStreamClient)) throw new Error(`refused ${caller.refused}`);
    return { callId, callSid, caller };
  }

  it('OpenAI: declares the tool, runs the function call, gives its output and asks for the reply that speaks to it; recorded in order', async () => {
    const tool = await createTool(acme, `${business.url}/orders`, { name: 'realtime_lookup' });
    business.secrets = [tool.secret];
    const agentId = await stsAgent('openai', tool.id);
    realtime.script.push({
      caller: 'Where is my order A1?',
      reply: [{ text: 'Let me check.' }],
      tools: [{ name: 'realtime_lookup', arguments: { orderId: 'A1' } }],
      afterTools: (outputs) => [{ text: `It arrives ${String((outputs[0]!.answer as { eta: string }).eta)}.` }],
    });
    // The provider's session is opened while the answer is made, before the stream (issue #45).
    const next = realtime.nextSession();
    const { callId, callSid, caller } = await openCall(agentId);
    caller.start(callId, callSid);
    const session = await next;
    await session.waitFor('session.update');
    const declared = (session.received.find((event) => event.type === 'session.update')!.session.tools as { name: string; parameters: unknown }[]).map(
      (each) => each.name,
    );
    expect(declared).toEqual(['end_call', 'reach_resolution', 'opt_out', 'send_digits', 'realtime_lookup']);
    await caller.sendAudio(callerSpeech(600, 400));
    const row = await eventually(
      () => helpers.callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation',
    );
    const stored = await helpers.transcript(row.conversation_id!, 3);
    expect(stored).toEqual([
      { role: 'user', content: 'Where is my order A1?' },
      { role: 'assistant', content: 'Let me check.' },
      { role: 'assistant', content: 'It arrives Monday.' },
    ]);
    const output = session.received.find((event) => event.type === 'conversation.item.create')!;
    expect(JSON.parse(output.item.output)).toEqual({ status: 200, answer: { eta: 'Monday' } });
    // The reply after the output is asked for with a plain response.create (no instructions of its own), after
    // the one that answered the caller's turn (the gateway asks for replies itself: voice.md › Interruptions).
    const creates = session.received.filter((event) => event.type === 'response.create');
    expect(creates.map((event) => event.response ?? null)).toEqual([null, null]);
    expect(session.received.indexOf(creates[1]!)).toBeGreaterThan(session.received.indexOf(output));
    expect(business.received[0]!.parsed).toMatchObject({
      tool: 'realtime_lookup',
      arguments: { orderId: 'A1' },
      call: { id: callId, direction: 'outbound' },
      contact: { id: contactId },
      conversationId: row.conversation_id,
    });
    expect(business.received[0]!.verifiedWith).toEqual([0]);
    const calls = (await acme.rest.get(`/api/conversations/${row.conversation_id}/tool-calls`)).body.data as Record<string, unknown>[];
    // After the caller's turn and the words the model said before it called ("Let me check."), before the words after.
    expect(calls).toEqual([expect.objectContaining({ tool: 'realtime_lookup', status: 'succeeded', callId, afterSequence: 2 })]);
    caller.stop();
    caller.hangUp();
    await session.closed;
  });

  it('Gemini: declares the tool among functionDeclarations, answers its toolCall with a toolResponse, and the model speaks to it', async () => {
    const tool = await createTool(acme, `${business.url}/orders`, { name: 'gemini_lookup' });
    business.secrets = [tool.secret];
    const agentId = await stsAgent('google', tool.id);
    gemini.script.push({
      caller: 'Where is my order B2?',
      reply: [{ text: 'One second.' }],
      tools: [{ name: 'gemini_lookup', args: { orderId: 'B2' } }],
      afterTools: (responses) => [{ text: `It arrives ${String((responses[0]!.answer as { eta: string }).eta)}.` }],
    });
    // The provider's session is opened while the answer is made, before the stream (issue #45).
    const next = gemini.nextSession();
    const { callId, callSid, caller } = await openCall(agentId);
    caller.start(callId, callSid);
    const session = await next;
    await session.waitFor('setup');
    const declarations = session.received.find((message) => message.setup)!.setup.tools[0].functionDeclarations.map((each: { name: string }) => each.name);
    expect(declarations).toEqual(['end_call', 'reach_resolution', 'opt_out', 'send_digits', 'gemini_lookup']);
    await caller.sendAudio(callerSpeech(600, 400));
    const row = await eventually(
      () => helpers.callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation',
    );
    const stored = await helpers.transcript(row.conversation_id!, 2);
    expect(stored[0]).toEqual({ role: 'user', content: 'Where is my order B2?' });
    expect(stored[1]!.content).toBe('One second. It arrives Monday.');
    const response = session.received.find((message) => message.toolResponse)!.toolResponse.functionResponses[0];
    expect(response).toMatchObject({ name: 'gemini_lookup', response: { status: 200, answer: { eta: 'Monday' } } });
    expect(business.received[0]!.parsed).toMatchObject({ tool: 'gemini_lookup', arguments: { orderId: 'B2' }, call: { id: callId } });
    const calls = (await acme.rest.get(`/api/conversations/${row.conversation_id}/tool-calls`)).body.data as Record<string, unknown>[];
    expect(calls).toEqual([expect.objectContaining({ tool: 'gemini_lookup', status: 'succeeded', afterSequence: 1 })]);
    caller.stop();
    caller.hangUp();
    await session.closed;
  });
});
