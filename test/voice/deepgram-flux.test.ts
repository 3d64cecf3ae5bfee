import { CreateTurnTakingAgentDocument, StreamingCallDocument, TurnTakingAgentDocument } from '../generated/graphql.js';
import { graphqlCode, graphqlFields, restFields } from '../agents/fixtures.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeDeepgram, type FakeDeepgram, type FakeDeepgramSession, type FluxTurn } from '../support/fake-deepgram.js';
import { FakeOpenAiChat, type ChatAnswer } from '../support/fake-openai-chat.js';
import { BusinessEndpoint } from '../tools/business.js';
import { createTool } from '../tools/fixtures.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { eventually, stsHelpers } from './sts-fixtures.js';

// Deepgram Flux (`/v2/listen`, turn-based recognition) as a streaming agent's recognizer, on the real
// doors: voiceConfig.turnDetection semantic (or a Flux sttModel) opens /v2/listen, checked by the
// Deepgram double against Deepgram's published AsyncAPI for that channel (deepgram-listen-v2.asyncapi.json:
// its query, its client messages, closed to unknown fields; it answers with Connected and TurnInfo
// StartOfTurn / Update / EndOfTurn); the caller's turn ends at EndOfTurn and is answered. A Nova model
// with a semantic end of turn, or Flux with a silence one, is refused alike on both doors.
// Flux's eager end of turn (eager_eot_threshold): the reply's model request starts at EagerEndOfTurn
// (the OpenAI chat double, streaming), nothing reaches the caller or the transcript before EndOfTurn,
// TurnResumed aborts it, and a tool call it makes waits for EndOfTurn. Orders are read from the
// doubles' events (the Deepgram double holds its messages from EndOfTurn on until the test lets them go).
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const DEEPGRAM_KEY = 'dg-test-key-flux';
const ELEVENLABS_KEY = 'xi-test-key-flux';
const QUESTION = 'Can you move my delivery to Monday?';

let twilioFake: FakeTwilio;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let chat: FakeOpenAiChat;
let business: BusinessEndpoint;
/** The gateway's log lines (level info): a held tool call is told there. */
const logs: Record<string, any>[] = [];

const base = { name: 'Flux agent', instructions: 'You answer callers of the Acme shop.', modelConfig: { model: 'builtin/echo' } };
const streaming = { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' };

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  chat = await new FakeOpenAiChat().start();
  business = await new BusinessEndpoint().start();
  const logTo = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, any>) };
  app = await startTwilioApp(twilioFake, logTo, {
    logLevel: 'info',
    tools: { allowPrivate: true, mcpRefreshMs: 600_000 },
    providers: {
      deepgramApiKey: DEEPGRAM_KEY,
      deepgramBaseUrl: deepgram.baseUrl,
      elevenlabsApiKey: ELEVENLABS_KEY,
      elevenlabsBaseUrl: elevenlabs.baseUrl,
      openaiCompatibleBaseUrl: chat.url,
      openaiCompatibleApiKey: 'sk-compatible-flux',
    },
  });
  acme = await app.organization('Acme flux');
  other = await app.organization('Other flux');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await deepgram?.close();
  await elevenlabs?.close();
  await twilioFake?.close();
  await chat?.close();
  await business?.close();
});

beforeEach(() => {
  deepgram.clearScript();
  elevenlabs.reset();
});

afterEach(() => {
  // The double checked the handshake and every message against the channel Deepgram publishes.
  expect(deepgram.problems).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
  expect(chat.problems).toEqual([]);
  deepgram.problems.length = 0;
});

const { liveCall, answeredStream, callRow } = stsHelpers(() => ({ app, twilioFake, acme }));

async function activeAgent(voiceConfig: Record<string, unknown>): Promise<string> {
  const created = await acme.rest.post('/api/agents', { ...base, voiceConfig, firstMessageMode: 'wait_for_caller' });
  expect(created.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
  return created.body.id;
}

/** A live call of the agent: its stream started, the recognizer's session open; the caller asks, and the stored exchange is read. */
async function askOnce(agentId: string): Promise<{ session: FakeDeepgramSession; messages: { role: string; content: string }[] }> {
  deepgram.script([QUESTION]);
  const callId = await liveCall({ org: acme, agentId, contactId: null, connectionId });
  const { url, callSid } = await answeredStream(callId);
  const caller = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
  const next = deepgram.nextSession();
  caller.start(callId, callSid);
  const session = await next;
  await caller.sendAudio(callerSpeech(600, 900), 2);
  const { conversation_id: conversationId } = await eventually(
    () => callRow(callId),
    (row) => Boolean(row.conversation_id),
    'the call’s conversation',
  );
  const stored = await eventually(
    () => acme.rest.get(`/api/conversations/${conversationId}/messages?limit=10`),
    (res) => res.body.data?.length === 2,
    'the caller’s turn and its answer stored',
  );
  caller.stop();
  await session.closed;
  return { session, messages: stored.body.data.map(({ role, content }: { role: string; content: string }) => ({ role, content })) };
}

describe('Deepgram Flux as the streaming recognizer', () => {
  it('opens /v2/listen for turnDetection semantic, its eagerness as eot_threshold, and answers the turn Flux ends', async () => {
    const agentId = await activeAgent({ ...streaming, turnDetection: { type: 'semantic', eagerness: 'high' } });
    const { session, messages } = await askOnce(agentId);
    expect(session.flux).toBe(true);
    expect(Object.fromEntries(session.query)).toEqual({
      model: 'flux-general-en',
      encoding: 'mulaw',
      sample_rate: '8000',
      eot_threshold: '0.6',
      eager_eot_threshold: '0.4',
    });
    // Flux's events, as the double sent them: Connected, then the turn's StartOfTurn, its Updates and its EndOfTurn.
    const events = session.sent.map((message) => message.event ?? message.type);
    expect(events[0]).toBe('Connected');
    expect(events.slice(1, 2)).toEqual(['StartOfTurn']);
    expect(events).toContain('EndOfTurn');
    expect(session.sent.find((message) => message.event === 'EndOfTurn')!.transcript).toBe(QUESTION);
    // The gateway sent only what the channel lists: audio, then CloseStream (no KeepAlive or Finalize, which /v2/listen has not).
    expect(session.received.map((message) => message.type)).toEqual(['CloseStream']);
    expect(messages).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: `Echo: ${QUESTION}` },
    ]);
  }, 30_000);

  it('opens /v2/listen for a Flux sttModel (Deepgram’s default threshold), and /v1/listen with the agent’s silenceMs as endpointing', async () => {
    const flux = await askOnce(await activeAgent({ ...streaming, sttModel: 'flux-general-en' }));
    expect(flux.session.flux).toBe(true);
    expect(Object.fromEntries(flux.session.query)).toEqual({ model: 'flux-general-en', encoding: 'mulaw', sample_rate: '8000' });
    expect(flux.messages[1]).toEqual({ role: 'assistant', content: `Echo: ${QUESTION}` });

    const silence = await askOnce(await activeAgent({ ...streaming, turnDetection: { type: 'silence', silenceMs: 500 } }));
    expect(silence.session.flux).toBe(false);
    expect(silence.session.query.get('endpointing')).toBe('500');
    expect(silence.session.query.get('model')).toBe('nova-3');
    expect(silence.messages[0]).toEqual({ role: 'user', content: QUESTION });
  }, 40_000);

  it('stores turnDetection on a streaming agent alike on both doors, and refuses a Nova model with a semantic end of turn, or Flux with a silence one, alike', async () => {
    const voiceConfig = { ...streaming, sttModel: 'flux-general-multi', language: 'de-DE', turnDetection: { type: 'semantic', eagerness: 'low' } };
    const created = await acme.rest.post('/api/agents', { ...base, voiceConfig });
    expect(created.status).toBe(201);
    const expected = { pipelineMode: 'streaming', language: 'de-DE', turnDetection: { type: 'semantic', eagerness: 'low', silenceMs: null } };
    expect(created.body.voiceConfig).toMatchObject({ ...expected, sttModel: 'flux-general-multi' });
    expect((await acme.graphql.ok(TurnTakingAgentDocument, { id: created.body.id })).agent.voiceConfig).toMatchObject(expected);
    expect((await other.rest.get(`/api/agents/${created.body.id}`)).status).toBe(404);
    expect(graphqlCode(await other.graphql.run(TurnTakingAgentDocument, { id: created.body.id }))).toBe('NOT_FOUND');

    const cases: [Record<string, unknown>, string[]][] = [
      [{ ...streaming, sttModel: 'nova-3', turnDetection: { type: 'semantic' } }, ['voiceConfig.sttModel']],
      [{ ...streaming, sttModel: 'flux-general-en', turnDetection: { type: 'silence', silenceMs: 400 } }, ['voiceConfig.turnDetection.type']],
      [{ ...streaming, sttModel: 'flux-general-xx' }, ['voiceConfig.sttModel']],
    ];
    for (const [config, fields] of cases) {
      expect([config, restFields(await acme.rest.post('/api/agents', { ...base, voiceConfig: config }))]).toEqual([config, fields]);
      expect([config, graphqlFields(await acme.graphql.run(CreateTurnTakingAgentDocument, { input: { ...base, voiceConfig: config } as never }))]).toEqual([
        config,
        fields,
      ]);
    }
  });
});

/** A live Flux call of the agent: the caller's stream started and the recognizer's session open, nothing said yet. */
async function fluxCall(agentId: string, turns: (string | FluxTurn)[]) {
  deepgram.script(turns);
  const callId = await liveCall({ org: acme, agentId, contactId: null, connectionId });
  const { url, callSid } = await answeredStream(callId);
  const caller = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
  const next = deepgram.nextSession();
  caller.start(callId, callSid);
  const session = await next;
  const { conversation_id: conversationId } = await eventually(
    () => callRow(callId),
    (row) => Boolean(row.conversation_id),
    'the call’s conversation',
  );
  const messages = async () =>
    ((await acme.rest.get(`/api/conversations/${conversationId}/messages?limit=20`)).body.data as { role: string; content: string }[]).map(
      ({ role, content }) => ({ role, content }),
    );
  const stored = (count: number) =>
    eventually(
      () => messages(),
      (list) => list.length >= count,
      `${count} messages stored`,
    );
  const hangUp = async () => {
    caller.stop();
    await session.closed;
    return (
      await eventually(
        () => acme.rest.get(`/api/calls/${callId}`),
        (res) => res.body.turnLatency !== null,
        'the call’s turn latency recorded',
      )
    ).body.turnLatency;
  };
  return { callId, caller, session, messages, stored, hangUp };
}

/** The user message of a chat request: what the model was asked to answer. */
const asked = (request: Record<string, any>) => request.messages.at(-1)?.content;

/** A chat answer held until the test lets it go (or never, for a request that should be aborted). */
function held(): { answer: Promise<ChatAnswer>; give(answer: ChatAnswer): void } {
  let give: (answer: ChatAnswer) => void = () => undefined;
  const answer = new Promise<ChatAnswer>((resolve) => {
    give = resolve;
  });
  return { answer, give };
}

const eventsOf = (session: FakeDeepgramSession) =>
  session.sent.filter((message) => message.type === 'TurnInfo' && message.event !== 'Update').map((message) => message.event);

describe('Flux’s eager end of turn', () => {
  const PART = 'Can you move my delivery';
  const REST = 'to Monday?';
  const WHOLE = `${PART} ${REST}`;
  const model = { modelConfig: { model: 'openai-compatible/flux-llm' } };
  const semantic = { ...streaming, turnDetection: { type: 'semantic', eagerness: 'medium' } };

  async function eagerAgent(extra: Record<string, unknown> = {}): Promise<string> {
    const created = await acme.rest.post('/api/agents', { ...base, ...model, voiceConfig: semantic, firstMessageMode: 'wait_for_caller', ...extra });
    expect(created.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id;
  }

  beforeEach(() => {
    chat.requests.length = 0;
    chat.aborted.length = 0;
    chat.answer = () => ({ content: 'Yes, Monday works.' });
    business.received.length = 0;
  });

  it('asks the model at EagerEndOfTurn, sends nothing and stores nothing before EndOfTurn, then plays the reply it started', async () => {
    const agentId = await eagerAgent();
    const answer = held();
    chat.answer = () => answer.answer;
    const call = await fluxCall(agentId, [QUESTION]);
    expect(Object.fromEntries(call.session.query)).toMatchObject({ eot_threshold: '0.7', eager_eot_threshold: '0.5' });
    call.session.holdFrom('EndOfTurn');
    await call.caller.sendAudio(callerSpeech(600, 900), 2);
    // The model was asked while Flux had said only EagerEndOfTurn: its EndOfTurn is still held.
    await chat.until(() => chat.requests.length === 1, 'the speculative request');
    expect(call.session.holding).toBe(true);
    expect(eventsOf(call.session)).toEqual(['StartOfTurn', 'EagerEndOfTurn']);
    expect(asked(chat.requests[0]!)).toBe(QUESTION);
    answer.give({ content: 'Yes, Monday works.' });
    // The synthesizer spoke it, but the caller heard nothing and nothing was stored.
    await eventually(
      async () => elevenlabs.streams.some((stream) => stream.audioChunks > 0),
      (spoken) => spoken,
      'the synthesizer’s audio of the speculative reply',
    );
    expect(await call.messages()).toEqual([]);
    expect(call.caller.events('media')).toEqual([]);

    call.session.release();
    const stored = await call.stored(2);
    expect(stored).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: 'Yes, Monday works.' },
    ]);
    expect(call.caller.events('media').length).toBeGreaterThan(0);
    // One request for the turn: the one started early was used, none was asked again or aborted.
    expect(chat.requests).toHaveLength(1);
    expect(chat.aborted).toEqual([]);
    const latency = await call.hangUp();
    expect(latency).toMatchObject({ eagerReplies: 1, eagerCancelled: 0 });
    expect(latency.turns).toHaveLength(1);
    expect(latency.turns[0]).toMatchObject({ eagerStart: true, modelMs: expect.any(Number) });
    // The same on GraphQL; another organization sees no such call.
    expect((await acme.graphql.ok(StreamingCallDocument, { id: call.callId })).call.turnLatency).toEqual(latency);
    expect(graphqlCode(await other.graphql.run(StreamingCallDocument, { id: call.callId }))).toBe('NOT_FOUND');
  }, 30_000);

  it('aborts the request on TurnResumed (nothing sent or stored), and answers the whole turn once', async () => {
    const agentId = await eagerAgent();
    const never = held();
    chat.answer = (_request, n) => (n === 0 ? never.answer : { content: 'Monday it is.' });
    const call = await fluxCall(agentId, [`${PART} | ${REST}`]);
    await call.caller.sendAudio(callerSpeech(600, 300), 2);
    await chat.until(() => chat.requests.length === 1, 'the speculative request of the first words');
    expect(asked(chat.requests[0]!)).toBe(PART);
    // The caller goes on: Flux says TurnResumed, the request is aborted.
    await call.caller.sendAudio(callerSpeech(600, 900), 2);
    await chat.until(() => chat.aborted.includes(0), 'the first request aborted');
    const stored = await call.stored(2);
    expect(stored).toEqual([
      { role: 'user', content: WHOLE },
      { role: 'assistant', content: 'Monday it is.' },
    ]);
    expect(eventsOf(call.session)).toEqual(['StartOfTurn', 'EagerEndOfTurn', 'TurnResumed', 'EagerEndOfTurn', 'EndOfTurn']);
    expect(chat.requests.map(asked)).toEqual([PART, WHOLE]);
    const latency = await call.hangUp();
    expect(latency).toMatchObject({ eagerReplies: 2, eagerCancelled: 1 });
    expect(latency.turns).toHaveLength(1);
    // Nothing of the aborted reply was stored.
    expect(await call.messages()).toEqual(stored);
  }, 30_000);

  it('answers afresh with the final words when the turn ends with words the eager reply did not answer', async () => {
    const agentId = await eagerAgent();
    const never = held();
    chat.answer = (_request, n) => (n === 0 ? never.answer : { content: 'Monday, then.' });
    // Flux's EndOfTurn after TurnResumed and new words, with no EagerEndOfTurn before it.
    const call = await fluxCall(agentId, [{ parts: [PART, REST], eager: [true, false] }]);
    await call.caller.sendAudio(callerSpeech(600, 300), 2);
    await chat.until(() => chat.requests.length === 1, 'the speculative request');
    await call.caller.sendAudio(callerSpeech(600, 900), 2);
    const stored = await call.stored(2);
    expect(stored).toEqual([
      { role: 'user', content: WHOLE },
      { role: 'assistant', content: 'Monday, then.' },
    ]);
    expect(eventsOf(call.session)).toEqual(['StartOfTurn', 'EagerEndOfTurn', 'TurnResumed', 'EndOfTurn']);
    expect(chat.requests.map(asked)).toEqual([PART, WHOLE]);
    expect(chat.aborted).toEqual([0]);
    expect(await call.hangUp()).toMatchObject({ eagerReplies: 1, eagerCancelled: 1 });
  }, 30_000);

  it('holds a tool call the speculative reply makes until EndOfTurn: the business hears nothing before it', async () => {
    const tool = await createTool(acme, `${business.url}/orders`, { name: 'lookup_order_flux' });
    const agentId = await eagerAgent({ toolIds: [tool.id] });
    chat.answer = (_request, n) =>
      n === 0 ? { toolCalls: [{ name: 'lookup_order_flux', arguments: { orderId: 'A1' } }] } : { content: 'Your order ships Monday.' };
    let session: FakeDeepgramSession | null = null;
    const endOfTurnSentWhenCalled: boolean[] = [];
    business.behave = () => {
      endOfTurnSentWhenCalled.push(session!.sent.some((message) => message.event === 'EndOfTurn'));
      return { json: { status: 'shipped', eta: 'Monday' } };
    };
    const logged = logs.length;
    const call = await fluxCall(agentId, [QUESTION]);
    session = call.session;
    call.session.holdFrom('EndOfTurn');
    await call.caller.sendAudio(callerSpeech(600, 900), 2);
    // The model asked for the tool; the gateway holds the call until the turn is confirmed.
    await eventually(
      async () => logs.slice(logged).some((line) => line.tool === 'lookup_order_flux' && /waits for the end of the turn/.test(String(line.msg))),
      (seen) => seen,
      'the held tool call',
    );
    expect(business.received).toEqual([]);
    expect(chat.requests).toHaveLength(1);
    call.session.release();
    const stored = await call.stored(2);
    expect(stored).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: 'Your order ships Monday.' },
    ]);
    expect(endOfTurnSentWhenCalled).toEqual([true]);
    expect(chat.requests).toHaveLength(2);
    await call.hangUp();
  }, 30_000);
});
