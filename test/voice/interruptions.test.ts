import { BackChannelMessagesDocument, CreateTurnTakingAgentDocument, TurnTakingAgentDocument, UpdateTurnTakingAgentDocument } from '../generated/graphql.js';
import { graphqlCode, graphqlFields, restFields } from '../agents/fixtures.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeDeepgram, type FakeDeepgram } from '../support/fake-deepgram.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { startFakeRealtime, type FakeRealtime, type FakeRealtimeSession } from '../support/fake-openai-realtime.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { eventually, stsHelpers } from './sts-fixtures.js';

// Interruptions that understand back-channels, on the real doors: an agent's voiceConfig.interruptions
// (validated alike on REST and GraphQL), then live calls of streaming agents (the Deepgram and
// ElevenLabs doubles, checked against their published descriptions) and of OpenAI sts agents (the
// Realtime double, checked against OpenAI's GA schemas): a "mhm" while the agent speaks does not cut
// or restart its reply and is stored marked; "wait, stop…" still cuts; modes never and any.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const GREETING = 'Hello, this is Ada. How can I help you?';
const LONG = 'Tell me everything about the opening hours of the shop on weekdays, at weekends and on public holidays, please.';
const INTERRUPTION = 'Wait, stop, I want to change the day.';
const DEEPGRAM_KEY = 'dg-test-key-interruptions';
const ELEVENLABS_KEY = 'xi-test-key-interruptions';
const GEMINI_KEY = 'gemini-test-key-interruptions';

let twilioFake: FakeTwilio;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let realtime: FakeRealtime;
let gemini: FakeGeminiLive;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
const agents: Record<string, string> = {};

async function activeAgent(name: string, voiceConfig: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await acme.rest.post('/api/agents', {
    name,
    instructions: 'You answer callers of the Acme shop.',
    modelConfig: { model: 'builtin/echo' },
    voiceConfig,
    ...extra,
  });
  expect(created.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
  return created.body.id;
}

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  realtime = await startFakeRealtime();
  gemini = await startFakeGeminiLive(GEMINI_KEY);
  app = await startTwilioApp(twilioFake, undefined, {
    providers: {
      deepgramApiKey: DEEPGRAM_KEY,
      deepgramBaseUrl: deepgram.baseUrl,
      elevenlabsApiKey: ELEVENLABS_KEY,
      elevenlabsBaseUrl: elevenlabs.baseUrl,
      openaiApiKey: 'sk-test-interruptions',
      openaiRealtimeUrl: realtime.url,
      geminiApiKey: GEMINI_KEY,
      geminiBaseUrl: gemini.baseUrl,
    },
  });
  acme = await app.organization('Acme interruptions');
  other = await app.organization('Other interruptions');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const streaming = { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' };
  agents.streamingWords = await activeAgent('Streaming, default interruptions', streaming, { firstMessage: GREETING });
  agents.streamingNever = await activeAgent('Streaming, never cut', { ...streaming, interruptions: { mode: 'never' } }, { firstMessage: GREETING });
  agents.streamingAny = await activeAgent('Streaming, any word cuts', { ...streaming, interruptions: { mode: 'any' } }, { firstMessage: GREETING });
  const sts = { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' };
  const sts_ = { modelConfig: { model: 'openai/gpt-realtime' }, firstMessageMode: 'wait_for_caller' };
  agents.stsWords = await activeAgent('Realtime, default interruptions', sts, sts_);
  agents.stsNever = await activeAgent('Realtime, never cut', { ...sts, interruptions: { mode: 'never' } }, sts_);
  agents.stsAny = await activeAgent('Realtime, any sound cuts', { ...sts, interruptions: { mode: 'any' } }, sts_);
  agents.geminiNever = await activeAgent(
    'Gemini, never cut',
    { pipelineMode: 'sts', stsProvider: 'google', voiceId: 'Kore', interruptions: { mode: 'never' } },
    { modelConfig: { model: 'google/gemini-3.8-live' }, firstMessageMode: 'wait_for_caller' },
  );
}, 60_000);

afterAll(async () => {
  await app?.close();
  await deepgram?.close();
  await elevenlabs?.close();
  await realtime?.close();
  await gemini?.close();
  await twilioFake?.close();
});

beforeEach(() => {
  deepgram.clearScript();
  elevenlabs.reset();
  elevenlabs.faults.speed = 1;
  realtime.script.length = 0;
  gemini.script.length = 0;
});

afterEach(() => {
  // Every double checked what the gateway sent against its provider's published description.
  expect(deepgram.problems.filter((problem) => problem.kind !== 'handshake')).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
  expect(realtime.problems).toEqual([]);
  expect(gemini.problems).toEqual([]);
  deepgram.problems.length = 0;
  realtime.problems.length = 0;
  gemini.problems.length = 0;
});

const { liveCall, answeredStream, callRow } = stsHelpers(() => ({ app, twilioFake, acme }));

async function openStream(agent: string): Promise<{ caller: MediaStreamClient; callId: string }> {
  const callId = await liveCall({ org: acme, agentId: agents[agent]!, contactId: null, connectionId });
  const { url, callSid } = await answeredStream(callId);
  const opened = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(opened instanceof MediaStreamClient)) throw new Error(`media stream refused: ${opened.refused}`);
  opened.start(callId, callSid);
  return { caller: opened, callId };
}

async function openRealtime(agent: string): Promise<{ caller: MediaStreamClient; session: FakeRealtimeSession; callId: string }> {
  const next = realtime.nextSession();
  const { caller, callId } = await openStream(agent);
  const session = await next;
  await session.waitFor('session.update');
  return { caller, session, callId };
}

/** Until the caller has heard `ms` of the reply whose audio starts after the first `after` frames (played in real time, as Twilio does). */
async function played(caller: MediaStreamClient, after: number, ms: number): Promise<void> {
  await caller.waitFor(() => {
    const frame = caller.frames[after];
    return frame !== undefined && frame.startsAt + ms <= Date.now();
  }, `${ms} ms of the reply played`);
}

type Stored = { role: string; content: string; backChannel: boolean };

/** The call's stored messages once there are `count`, on REST; GraphQL reads the same, back-channel marks included. */
async function stored(callId: string, count: number): Promise<Stored[]> {
  const { conversation_id: conversationId } = await eventually(
    () => callRow(callId),
    (row) => Boolean(row.conversation_id),
    'the call’s conversation',
  );
  const rest = await eventually(
    () => acme.rest.get(`/api/conversations/${conversationId}/messages?limit=100`),
    (res) => res.body.data?.length === count,
    `${count} stored messages`,
  );
  const messages: Stored[] = rest.body.data.map((message: Stored) => ({ role: message.role, content: message.content, backChannel: message.backChannel }));
  const graphql = await acme.graphql.ok(BackChannelMessagesDocument, { id: conversationId! });
  expect(graphql.conversation.messages.data.map(({ role, content, backChannel }) => ({ role, content, backChannel }))).toEqual(messages);
  expect((await other.rest.get(`/api/conversations/${conversationId}/messages`)).status).toBe(404);
  return messages;
}

const said = (role: string, content: string, backChannel = false): Stored => ({ role, content, backChannel });

describe('voiceConfig.interruptions and turnDetection', () => {
  const base = { name: 'Turn taking', instructions: 'You help callers.', modelConfig: { model: 'builtin/echo' } };

  it('are stored as sent with their defaults, read alike on both doors, and hidden from another organization', async () => {
    const voiceConfig = {
      pipelineMode: 'sts',
      stsProvider: 'openai',
      interruptions: { minWords: 2, ignore: ['mhm', 'Sounds good', 'mhm'] },
      turnDetection: { type: 'semantic', eagerness: 'high' },
    };
    const created = await acme.rest.post('/api/agents', { ...base, voiceConfig });
    expect(created.status).toBe(201);
    const expected = {
      pipelineMode: 'sts',
      language: null,
      interruptions: { mode: 'words', minWords: 2, minSpeechMs: 0, ignore: ['mhm', 'Sounds good'] },
      turnDetection: { type: 'semantic', eagerness: 'high', silenceMs: null },
    };
    expect(created.body.voiceConfig).toMatchObject(expected);
    expect((await acme.graphql.ok(TurnTakingAgentDocument, { id: created.body.id })).agent.voiceConfig).toEqual(expected);
    // Unset, both are null: the defaults of docs/voice.md (mode words, the language's back-channels; silence).
    const plain = await acme.graphql.ok(CreateTurnTakingAgentDocument, { input: { ...base, voiceConfig: { pipelineMode: 'streaming' } } as never });
    expect(plain.createAgent.voiceConfig).toMatchObject({ interruptions: null, turnDetection: null });
    const updated = await acme.graphql.ok(UpdateTurnTakingAgentDocument, {
      id: plain.createAgent.id,
      input: { voiceConfig: { pipelineMode: 'streaming', interruptions: { mode: 'never' } } } as never,
    });
    expect(updated.updateAgent.voiceConfig!.interruptions).toEqual({ mode: 'never', minWords: 1, minSpeechMs: 0, ignore: null });
    expect((await acme.rest.get(`/api/agents/${plain.createAgent.id}`)).body.voiceConfig.interruptions).toEqual(updated.updateAgent.voiceConfig!.interruptions);

    expect((await other.rest.get(`/api/agents/${created.body.id}`)).status).toBe(404);
    expect(graphqlCode(await other.graphql.run(TurnTakingAgentDocument, { id: created.body.id }))).toBe('NOT_FOUND');
    expect((await other.rest.put(`/api/agents/${created.body.id}`, { voiceConfig })).status).toBe(404);
    expect(graphqlCode(await other.graphql.run(UpdateTurnTakingAgentDocument, { id: created.body.id, input: { voiceConfig } as never }))).toBe('NOT_FOUND');
  });

  it('refuses what is out of bounds or does not fit with the same 400 naming the field on both doors', async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ pipelineMode: 'streaming', interruptions: { minWords: 0 } }, ['voiceConfig.interruptions.minWords']],
      [{ pipelineMode: 'streaming', interruptions: { minWords: 11 } }, ['voiceConfig.interruptions.minWords']],
      [{ pipelineMode: 'streaming', interruptions: { minSpeechMs: 5001 } }, ['voiceConfig.interruptions.minSpeechMs']],
      [{ pipelineMode: 'streaming', interruptions: { ignore: Array.from({ length: 51 }, (_, i) => `word${i}`) } }, ['voiceConfig.interruptions.ignore']],
      [{ pipelineMode: 'streaming', interruptions: { ignore: ['mhm', 'x'.repeat(41)] } }, ['voiceConfig.interruptions.ignore']],
      [{ pipelineMode: 'streaming', interruptions: { ignore: ['...'] } }, ['voiceConfig.interruptions.ignore']],
      [{ pipelineMode: 'batch', interruptions: { mode: 'never' } }, ['voiceConfig.interruptions']],
      [{ pipelineMode: 'batch', turnDetection: { type: 'semantic' } }, ['voiceConfig.turnDetection']],
      [{ pipelineMode: 'sts', stsProvider: 'openai', turnDetection: { type: 'silence', eagerness: 'high' } }, ['voiceConfig.turnDetection.eagerness']],
      [{ pipelineMode: 'sts', stsProvider: 'openai', turnDetection: { type: 'semantic', silenceMs: 500 } }, ['voiceConfig.turnDetection.silenceMs']],
      [{ pipelineMode: 'sts', stsProvider: 'openai', turnDetection: { type: 'silence', silenceMs: 50 } }, ['voiceConfig.turnDetection.silenceMs']],
    ];
    for (const [voiceConfig, fields] of cases) {
      expect([voiceConfig, restFields(await acme.rest.post('/api/agents', { ...base, voiceConfig }))]).toEqual([voiceConfig, fields]);
      const graphql = await acme.graphql.run(CreateTurnTakingAgentDocument, { input: { ...base, voiceConfig } as never });
      expect([voiceConfig, graphqlFields(graphql)]).toEqual([voiceConfig, fields]);
    }
    // An unknown mode: the same code on both doors.
    const unknown = { pipelineMode: 'streaming', interruptions: { mode: 'sometimes' } };
    expect((await acme.rest.post('/api/agents', { ...base, voiceConfig: unknown })).body.code).toBe('BAD_USER_INPUT');
    expect(graphqlCode(await acme.graphql.run(CreateTurnTakingAgentDocument, { input: { ...base, voiceConfig: unknown } as never }))).toBe('BAD_USER_INPUT');
    expect(await app.sql('select id from agents where name = ?', ['Turn taking'])).toHaveLength(2);
  });
});

describe('interruptions in streaming', () => {
  it('lets the reply play on through a back-channel, uncut and not restarted, and stores the back-channel marked after it', async () => {
    deepgram.script([LONG, 'Mhm.']);
    const { caller, callId } = await openStream('streamingWords');
    // The greeting heard to its end (stored once the caller's side says it played).
    await stored(callId, 1);
    const greetingFrames = caller.frames.length;
    await caller.sendAudio(callerSpeech(600, 700), 2);
    await played(caller, greetingFrames, 1500);
    await caller.sendAudio(callerSpeech(300, 700), 2);
    const messages = await stored(callId, 4);
    caller.stop();
    expect(messages).toEqual([said('assistant', GREETING), said('user', LONG), said('assistant', `Echo: ${LONG}`), said('user', 'Mhm.', true)]);
    expect(caller.events('clear')).toEqual([]);
    // One synthesis for the greeting, one for the answer: the back-channel was answered by nothing.
    expect(elevenlabs.streams).toHaveLength(2);
  }, 30_000);

  it('still cuts the reply on a real interruption, on its first words, before the caller’s turn has ended', async () => {
    deepgram.script([LONG, INTERRUPTION]);
    const { caller, callId } = await openStream('streamingWords');
    // The greeting heard to its end (stored once the caller's side says it played).
    await stored(callId, 1);
    const greetingFrames = caller.frames.length;
    await caller.sendAudio(callerSpeech(600, 700), 2);
    await played(caller, greetingFrames, 1500);
    // Speech without the silence that would end the turn: only its interim words can have cut the reply.
    await caller.sendAudio(callerSpeech(800, 0), 2);
    await caller.waitFor(() => caller.events('clear').length === 1, 'the clear');
    await caller.sendAudio(callerSpeech(0, 700), 2);
    const messages = await stored(callId, 5);
    caller.stop();
    expect(messages.slice(0, 2)).toEqual([said('assistant', GREETING), said('user', LONG)]);
    expect(`Echo: ${LONG}`.startsWith(messages[2]!.content)).toBe(true);
    expect(messages[2]!.content.length).toBeLessThan(`Echo: ${LONG}`.length - 20);
    expect(messages.slice(3)).toEqual([said('user', INTERRUPTION), said('assistant', `Echo: ${INTERRUPTION}`)]);
  }, 30_000);

  it('mode never: nothing the caller says cuts the reply; their turn is answered once it was heard', async () => {
    // Nothing is cut, so every reply plays whole: at twice the speaking rate the reply still outlasts
    // the caller's words spoken over it (1.5 s in, 0.4 s of speech) by seconds.
    elevenlabs.faults.speed = 2;
    deepgram.script([LONG, INTERRUPTION]);
    const { caller, callId } = await openStream('streamingNever');
    // The greeting heard to its end (stored once the caller's side says it played).
    await stored(callId, 1);
    const greetingFrames = caller.frames.length;
    await caller.sendAudio(callerSpeech(600, 700), 2);
    await played(caller, greetingFrames, 1500);
    await caller.sendAudio(callerSpeech(800, 700), 2);
    const messages = await stored(callId, 5);
    caller.stop();
    expect(messages).toEqual([
      said('assistant', GREETING),
      said('user', LONG),
      said('assistant', `Echo: ${LONG}`),
      said('user', INTERRUPTION),
      said('assistant', `Echo: ${INTERRUPTION}`),
    ]);
    expect(caller.events('clear')).toEqual([]);
  }, 30_000);

  it('mode any: a back-channel cuts the reply as any word does, and is answered as a turn', async () => {
    deepgram.script([LONG, 'Mhm.']);
    const { caller, callId } = await openStream('streamingAny');
    // The greeting heard to its end (stored once the caller's side says it played).
    await stored(callId, 1);
    const greetingFrames = caller.frames.length;
    await caller.sendAudio(callerSpeech(600, 700), 2);
    await played(caller, greetingFrames, 1500);
    await caller.sendAudio(callerSpeech(300, 700), 2);
    await caller.waitFor(() => caller.events('clear').length === 1, 'the clear');
    const messages = await stored(callId, 5);
    caller.stop();
    expect(messages[2]!.content.length).toBeLessThan(`Echo: ${LONG}`.length - 20);
    expect(messages.slice(3)).toEqual([said('user', 'Mhm.'), said('assistant', 'Echo: Mhm.')]);
  }, 30_000);
});

describe('interruptions in sts (OpenAI Realtime)', () => {
  const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(' ');

  /** The caller asks; the agent's long reply (20 words, 4 s of audio, generated over 3 s) starts playing. */
  async function longReplyPlaying(agent: string, next: { caller: string; reply: string }) {
    realtime.script.push(
      { caller: 'Tell me everything about your shop.', reply: [{ text: words }], paceMs: 150 },
      { caller: next.caller, reply: [{ text: next.reply }] },
    );
    const opened = await openRealtime(agent);
    await opened.caller.sendAudio(callerSpeech(600, 400));
    await opened.caller.waitFor(() => opened.caller.events('media').length >= 3, 'the start of the reply');
    return opened;
  }

  const sent = (session: FakeRealtimeSession, type: string) => session.received.filter((event) => event.type === type);

  it('turns OpenAI’s own cut and reply off and asks for noise reduction, so the gateway decides on the caller’s words', async () => {
    const { session, caller } = await openRealtime('stsWords');
    expect(session.sessionUpdates()[0]!.session.audio.input).toMatchObject({
      noise_reduction: { type: 'near_field' },
      turn_detection: { type: 'server_vad', create_response: false, interrupt_response: false },
    });
    caller.hangUp();
    const any = await openRealtime('stsAny');
    expect(any.session.sessionUpdates()[0]!.session.audio.input.turn_detection).toEqual({ type: 'server_vad' });
    any.caller.hangUp();
  });

  it('lets the reply play on through a back-channel: no clear, no cancel, no new reply; stored marked after the reply', async () => {
    const { caller, session, callId } = await longReplyPlaying('stsWords', { caller: 'Mhm.', reply: 'This reply is never asked for.' });
    await caller.sendAudio(callerSpeech(300, 400));
    const messages = await stored(callId, 3);
    expect(messages).toEqual([said('user', 'Tell me everything about your shop.'), said('assistant', words), said('user', 'Mhm.', true)]);
    expect(caller.events('clear')).toEqual([]);
    expect(sent(session, 'response.cancel')).toEqual([]);
    expect(sent(session, 'conversation.item.truncate')).toEqual([]);
    // The one response.create answered the first turn (the agent was silent then).
    expect(sent(session, 'response.create')).toHaveLength(1);
    caller.hangUp();
  });

  it('cuts the reply on a real interruption (clear, cancel, truncate) and answers it', async () => {
    const { caller, session, callId } = await longReplyPlaying('stsWords', { caller: INTERRUPTION, reply: 'Of course, which day?' });
    await caller.sendAudio(callerSpeech(400, 400));
    await caller.waitFor(() => caller.events('clear').length === 1, 'the clear');
    await session.waitFor('response.cancel');
    const truncate = await session.waitFor('conversation.item.truncate');
    expect(truncate.audio_end_ms).toBeLessThan(4000);
    const messages = await stored(callId, 4);
    expect(messages[0]).toEqual(said('user', 'Tell me everything about your shop.'));
    expect(messages[1]!.content.startsWith('word1')).toBe(true);
    expect(messages[1]!.content).not.toContain('word20');
    expect(messages.slice(2)).toEqual([said('user', INTERRUPTION), said('assistant', 'Of course, which day?')]);
    caller.hangUp();
  });

  it('cuts without waiting for the words when the caller speaks on past a back-channel’s length', async () => {
    const { caller, session } = await longReplyPlaying('stsWords', { caller: INTERRUPTION, reply: 'Yes?' });
    // Speech that has not stopped: no transcription yet, the long speech alone cuts.
    await caller.sendAudio(callerSpeech(400, 0));
    await caller.waitFor(() => caller.events('clear').length === 1, 'the clear');
    await session.waitFor('response.cancel');
    caller.hangUp();
  });

  it('mode never: the reply plays whole through a real interruption, which is answered after it', async () => {
    const { caller, session, callId } = await longReplyPlaying('stsNever', { caller: INTERRUPTION, reply: 'Of course, which day?' });
    await caller.sendAudio(callerSpeech(400, 400));
    const messages = await stored(callId, 4);
    expect(messages).toEqual([
      said('user', 'Tell me everything about your shop.'),
      said('assistant', words),
      said('user', INTERRUPTION),
      said('assistant', 'Of course, which day?'),
    ]);
    expect(caller.events('clear')).toEqual([]);
    expect(sent(session, 'response.cancel')).toEqual([]);
    caller.hangUp();
  });

  it('mode any: the provider’s voice activity cuts the reply as before, back-channel or not', async () => {
    const { caller, session, callId } = await longReplyPlaying('stsAny', { caller: 'Mhm.', reply: 'Yes?' });
    await caller.sendAudio(callerSpeech(300, 0));
    await caller.waitFor(() => caller.events('clear').length === 1, 'the clear');
    await session.waitFor('response.cancel');
    await caller.sendAudio(callerSpeech(0, 400));
    const messages = await stored(callId, 4);
    expect(messages.slice(2)).toEqual([said('user', 'Mhm.'), said('assistant', 'Yes?')]);
    caller.hangUp();
  });

  it('sends the agent’s turn detection in OpenAI’s shape: semantic_vad with its eagerness, server VAD with its pause', async () => {
    const semantic = await activeAgent(
      'Realtime, semantic',
      { pipelineMode: 'sts', stsProvider: 'openai', turnDetection: { type: 'semantic', eagerness: 'low' } },
      { modelConfig: { model: 'openai/gpt-realtime' }, firstMessageMode: 'wait_for_caller' },
    );
    const silence = await activeAgent(
      'Realtime, long pause',
      { pipelineMode: 'sts', stsProvider: 'openai', interruptions: { mode: 'any' }, turnDetection: { type: 'silence', silenceMs: 800 } },
      { modelConfig: { model: 'openai/gpt-realtime' }, firstMessageMode: 'wait_for_caller' },
    );
    agents.semantic = semantic;
    agents.silence = silence;
    const first = await openRealtime('semantic');
    expect(first.session.sessionUpdates()[0]!.session.audio.input.turn_detection).toEqual({
      type: 'semantic_vad',
      eagerness: 'low',
      create_response: false,
      interrupt_response: false,
    });
    first.caller.hangUp();
    const second = await openRealtime('silence');
    expect(second.session.sessionUpdates()[0]!.session.audio.input.turn_detection).toEqual({ type: 'server_vad', silence_duration_ms: 800 });
    second.caller.hangUp();
  });
});

describe('interruptions in sts (Gemini Live)', () => {
  it('mode never is sent as NO_INTERRUPTION: the reply is not cut, and the caller’s turn is answered after it', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(' ');
    gemini.script.push(
      { caller: 'Tell me everything about your shop.', reply: [{ text: words }], paceMs: 60 },
      { caller: INTERRUPTION, reply: [{ text: 'Of course, which day?' }] },
    );
    const next = gemini.nextSession();
    const { caller, callId } = await openStream('geminiNever');
    const session = await next;
    await session.waitFor('setup');
    expect(session.setup?.realtimeInputConfig).toEqual({ activityHandling: 'NO_INTERRUPTION' });
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 3, 'the start of the reply');
    await caller.sendAudio(callerSpeech(400, 400));
    expect(await stored(callId, 4)).toEqual([
      said('user', 'Tell me everything about your shop.'),
      said('assistant', words),
      said('user', INTERRUPTION),
      said('assistant', 'Of course, which day?'),
    ]);
    expect(caller.events('clear')).toEqual([]);
    caller.hangUp();
  });
});
