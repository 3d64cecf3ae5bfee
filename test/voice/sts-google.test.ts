import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import { ActivateProgramDocument, ConversationDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { frequency } from '../support/fake-openai-realtime.js';
import {
  GEMINI_AGENT_HZ,
  GEMINI_FIRST_LINE_HZ,
  GEMINI_WORD_MS,
  LIVE_PATH,
  startFakeGeminiLive,
  type FakeGeminiLive,
  type FakeGeminiSession,
} from '../support/fake-gemini-live.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { startTwilioApp, waitForExecution } from '../telephony/fixtures.js';
import { voiceCampaign } from './fixtures.js';
import { eventually, stsHelpers, unescapeXml } from './sts-fixtures.js';
import { testRunner } from '../runner/fixtures.js';

// The speech-to-speech bridge on Google: an agent with stsProvider google, a live Twilio call, the
// Media Streams caller sending μ-law, and the Gemini Live double (GEMINI_BASE_URL) hearing 16 kHz
// PCM and answering 24 kHz PCM. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const { mulaw } = alawmulaw;
const INSTRUCTIONS = 'You are Ada, the voice assistant of the Acme shop. Keep answers short.';
const GEMINI_KEY = 'gemini-test-key';

let twilioFake: FakeTwilio;
let gemini: FakeGeminiLive;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let agentId: string;
let contactId: string;

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  gemini = await startFakeGeminiLive(GEMINI_KEY);
  app = await startTwilioApp(twilioFake, undefined, { providers: { geminiApiKey: GEMINI_KEY, geminiBaseUrl: gemini.baseUrl } });
  acme = await app.organization('Acme gemini');
  other = await app.organization('Other gemini');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const agent = await acme.rest.post('/api/agents', {
    name: 'Ada on Gemini',
    instructions: INSTRUCTIONS,
    modelConfig: { model: 'google/gemini-3.8-live' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'google', voiceId: 'Kore' },
    // These tests are about the caller's turns; the first message is tested on an agent of its own.
    firstMessageMode: 'wait_for_caller',
    resolutionCriteria: [{ label: 'Booked', description: 'The caller booked a visit' }],
  });
  expect(agent.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  agentId = agent.body.id;
  contactId = (await createAudience(acme, 1)).contactIds[0]!;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await gemini?.close();
  await twilioFake?.close();
});

beforeEach(() => {
  gemini.script.length = 0;
  gemini.refuseWith = null;
  gemini.problems.length = 0;
});

afterEach(() => {
  // The double parses every message as the service does: the gateway sent none it would refuse.
  expect(gemini.problems).toEqual([]);
});

const { liveCall: insertLiveCall, answeredStream, callRow, transcript, expectTurnLatency } = stsHelpers(() => ({ app, twilioFake, acme }));

function liveCall(agent = agentId): Promise<string> {
  return insertLiveCall({ org: acme, agentId: agent, contactId, connectionId });
}

/** The answer webhook, and the Live session the gateway sets up for it meanwhile, before any stream (issue #45). */
async function answeredWithSession(callId: string): Promise<{ url: string; callSid: string; session: FakeGeminiSession }> {
  const next = gemini.nextSession();
  const answered = await answeredStream(callId);
  const session = await next;
  await session.waitFor('setup');
  return { ...answered, session };
}

async function openStream(callId: string): Promise<{ caller: MediaStreamClient; session: FakeGeminiSession }> {
  const { url, callSid, session } = await answeredWithSession(callId);
  const opened = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(opened instanceof MediaStreamClient)) throw new Error(`media stream refused: ${opened.refused}`);
  opened.start(callId, callSid);
  return { caller: opened, session };
}

/** The SNR (dB) of the 16 kHz audio the double heard against the caller's μ-law, decoded and linearly interpolated to 16 kHz, at the best delay. */
function snrAgainstCaller(heard: Int16Array, ulaw: Buffer): number {
  const original = mulaw.decode(new Uint8Array(ulaw));
  const want = Int16Array.from({ length: original.length * 2 }, (_, i) =>
    i % 2 === 0 ? original[i / 2]! : Math.round((original[(i - 1) / 2]! + (original[(i + 1) / 2] ?? 0)) / 2),
  );
  let best = -Infinity;
  for (let lag = 0; lag <= 120; lag++) {
    let signal = 0;
    let noise = 0;
    for (let i = 200; i + lag < heard.length && i < want.length - 200; i++) {
      signal += want[i]! ** 2;
      noise += (heard[i + lag]! - want[i]!) ** 2;
    }
    best = Math.max(best, 10 * Math.log10(signal / Math.max(noise, 1)));
  }
  return best;
}

describe('a speech-to-speech call on Gemini Live', () => {
  it('sets the session up through the SDK, transcodes both ways, and stores both sides as the conversation', async () => {
    gemini.script.push({ caller: 'Can I come by tomorrow morning?', reply: [{ text: 'Yes, we open at nine tomorrow.' }] });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);

    // The SDK's socket, built on GEMINI_BASE_URL, with the key; the setup in the Live API's shape.
    expect(session.path.replace(/^\/+/, '/').split('?')[0]).toBe(LIVE_PATH);
    expect(session.key).toBe(GEMINI_KEY);
    expect(session.setup).toMatchObject({
      model: 'models/gemini-3.8-live',
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
      systemInstruction: { parts: [{ text: expect.stringContaining(INSTRUCTIONS) }] },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
      sessionResumption: {},
    });
    expect(session.setup!.tools[0].functionDeclarations.map((tool: { name: string }) => tool.name)).toEqual([
      'end_call',
      'reach_resolution',
      'opt_out',
      'send_digits',
    ]);

    // The caller speaks: Gemini hears it as 16 kHz PCM, close to the caller's own audio.
    const speech = callerSpeech(600, 400);
    await caller.sendAudio(speech);
    await caller.waitFor(() => caller.events('media').length >= 6, 'the agent’s reply');
    const heardByGemini = session.audio();
    expect(heardByGemini.length).toBe(speech.length * 2);
    expect(snrAgainstCaller(heardByGemini, speech)).toBeGreaterThan(20);
    expect(session.received.every((message) => !message.realtimeInput || message.realtimeInput.audio.mimeType === 'audio/pcm;rate=16000')).toBe(true);

    // The agent's 24 kHz words reach the caller as μ-law 8 kHz, 200 ms each, at their pitch.
    const heard = caller.heard();
    expect(heard).toHaveLength(6);
    for (const frame of heard) {
      expect(frame.payload.length).toBe((GEMINI_WORD_MS * 8000) / 1000);
      expect(Math.abs(frequency(frame.payload) - GEMINI_AGENT_HZ)).toBeLessThan(20);
    }

    const row = await eventually(
      () => callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation link',
    );
    expect(await transcript(row.conversation_id!, 2)).toEqual([
      { role: 'user', content: 'Can I come by tomorrow morning?' },
      { role: 'assistant', content: 'Yes, we open at nine tomorrow.' },
    ]);
    const graphql = await acme.graphql.ok(ConversationDocument, { id: row.conversation_id!, limit: 100 });
    expect(graphql.conversation.messages.data.map((message) => message.content)).toEqual(['Can I come by tomorrow morning?', 'Yes, we open at nine tomorrow.']);
    const [stored] = await app.sql<{ model: string }>(`select model from messages where conversation_id = ? and role = 'assistant'`, [row.conversation_id]);
    expect(stored!.model).toBe('google/gemini-3.8-live');
    // Another organization sees the conversation on neither door.
    expect((await other.rest.get(`/api/conversations/${row.conversation_id}`)).status).toBe(404);
    expect((await other.graphql.run(ConversationDocument, { id: row.conversation_id! })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    caller.stop();
    caller.hangUp();
    await session.closed;
    await eventually(
      () => acme.rest.get(`/api/conversations/${row.conversation_id}`),
      (res) => res.body.status === 'ended',
      'the conversation’s end',
    );
  });

  it('times each agent turn from the end of the caller’s speech (our detector: Gemini sends no such event) to its first audio, the same on both doors', async () => {
    // The double declares its delay: each reply starts PROVIDER_DELAY_MS after its own activity detection ended the caller's turn.
    const PROVIDER_DELAY_MS = 150;
    const replies = ['Yes.', 'Nine.', 'Bye.'];
    for (const [index, reply] of replies.entries())
      gemini.script.push({ caller: `Question ${index + 1}?`, reply: [{ text: reply }], delayMs: PROVIDER_DELAY_MS });
    const callId = await liveCall();
    const startedAt = Date.now();
    const { caller } = await openStream(callId);
    for (let turn = 1; turn <= replies.length; turn++) {
      await caller.sendAudio(callerSpeech(400, 400));
      await caller.waitFor(() => caller.events('media').length >= turn, `reply ${turn}`);
      // The one-word reply has played before the caller speaks again: no barge-in.
      await new Promise((resolve) => setTimeout(resolve, GEMINI_WORD_MS + 50));
    }
    expect((await acme.rest.get(`/api/calls/${callId}`)).body.turnLatency).toBeNull();
    caller.stop();
    caller.hangUp();

    const latency = await expectTurnLatency(callId, { provider: 'google', turns: replies.length, delayMs: PROVIDER_DELAY_MS, startedAt, other });
    // Under a second past the declared delay: each turn began at this caller turn's end, not an earlier one's.
    for (const turn of latency.turns) expect(turn.totalMs).toBeLessThan(PROVIDER_DELAY_MS + 1000);
  });

  it('clears the caller’s audio when Gemini says it was interrupted, and keeps the words as far as they were heard', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(' ');
    gemini.script.push({ caller: 'Tell me everything about your shop.', reply: [{ text: words }], paceMs: 60 });
    const callId = await liveCall();
    const { caller } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 3, 'the start of the reply');
    await caller.sendAudio(callerSpeech(300, 0));
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    expect(caller.events('clear')[0]!.streamSid).toBe(caller.streamSid);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(caller.events('media').length).toBeLessThan(20);
    const heardWords = caller.heard().length;

    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    const messages = await transcript(conversationId!, 2);
    expect(messages[0]).toEqual({ role: 'user', content: 'Tell me everything about your shop.' });
    // The words whose audio had begun to play: at least what the caller heard, less one word of slack
    // for the word being played, and in order from the first. At most the words whose audio reached the
    // caller before the clear: the caller's own clock (when it thinks a frame began to play) lags behind
    // on a loaded machine, so what it counts as heard is only a lower bound of what the gateway was told.
    const kept = messages[1]!.content.split(' ');
    const clearIndex = caller.received.findIndex((message) => message.event === 'clear');
    const mediaBeforeClear = caller.received.slice(0, clearIndex).filter((message) => message.event === 'media').length;
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `word${i + 1}`));
    expect(kept.length).toBeGreaterThanOrEqual(Math.max(1, heardWords - 1));
    expect(kept.length).toBeLessThanOrEqual(mediaBeforeClear);
    expect(messages[1]!.content).not.toContain('word20');
    caller.hangUp();
  });

  it('clears a reply Gemini finished generating but the caller is still hearing when the caller speaks again', async () => {
    gemini.script.push(
      { caller: 'What are your hours?', reply: [{ text: 'We open at nine and close at six on weekdays.' }] },
      { caller: 'Thanks.', reply: [{ text: 'Bye.' }] },
    );
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await session.waitFor('realtimeInput');
    // The whole reply (10 words, 2 s of audio) is sent at once; the caller talks while it plays.
    await caller.waitFor(() => caller.events('media').length >= 10, 'the whole reply');
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    expect(caller.heard().length).toBeLessThan(10);
    const { conversation_id: conversationId } = await callRow(callId);
    const messages = await transcript(conversationId!, 4);
    expect(messages.map((message) => message.content)).toEqual(['What are your hours?', 'We open at nine and close at six on weekdays.', 'Thanks.', 'Bye.']);
    caller.hangUp();
  });

  it('records a resolution, answers a tool the agent does not have with an error, and hangs up after the goodbye on end_call', async () => {
    gemini.script.push({
      caller: 'Please book me a visit on Monday.',
      reply: [{ text: 'You are booked for Monday. Goodbye!' }],
      tools: [
        { name: 'transfer_call', args: { to: '+15550000000' } },
        { name: 'reach_resolution', args: { label: 'Booked', explanation: 'Visit booked for Monday' } },
        { name: 'end_call', args: { reason: 'done' } },
      ],
    });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    const closed = await caller.closed;
    expect(closed.code).toBe(1000);
    expect(caller.heard()).toHaveLength(6);
    expect(caller.events('mark').map((message) => message.mark.name)).toEqual(['end_call']);
    const responses = session.received.filter((message) => message.toolResponse).flatMap((message) => message.toolResponse.functionResponses);
    expect(responses.map((response: { name: string; response: unknown }) => [response.name, response.response])).toEqual([
      ['transfer_call', { error: 'unknown tool transfer_call' }],
      ['reach_resolution', { recorded: true }],
      ['end_call', { ending: true }],
    ]);
    const { conversation_id: conversationId } = await callRow(callId);
    const ended = await eventually(
      () => acme.rest.get(`/api/conversations/${conversationId}`),
      (res) => res.body.status === 'ended',
      'the conversation’s end',
    );
    expect(ended.body.outcome).toEqual([{ label: 'Booked', met: true, explanation: 'Visit booked for Monday' }]);
  });

  it('resumes the session on goAway with the last handle, the call going on', async () => {
    gemini.script.push({ caller: 'First question?', reply: [{ text: 'First answer.' }] }, { caller: 'Second question?', reply: [{ text: 'Second answer.' }] });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 2, 'the first reply');
    const next = gemini.nextSession();
    session.goAway(1500);
    const resumed = await next;
    await resumed.waitFor('setup');
    expect(resumed.resumedFrom).toMatch(/^handle-/);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 4, 'the reply of the resumed session');
    await session.closed;
    expect(await closeCodeWithin(caller, 300)).toBe('still open');
    const { conversation_id: conversationId } = await callRow(callId);
    expect(await transcript(conversationId!, 4)).toEqual([
      { role: 'user', content: 'First question?' },
      { role: 'assistant', content: 'First answer.' },
      { role: 'user', content: 'Second question?' },
      { role: 'assistant', content: 'Second answer.' },
    ]);
    caller.hangUp();
  });

  // Google's Live reference: the transcriptions are "independent to the model turn", so the caller's
  // words may come before, among or after the reply's audio, words and turnComplete (GeminiOrder), and
  // so may the reply's own words.
  it.each([
    'caller-first',
    'caller-split',
    'caller-after-reply',
    'caller-after-complete',
    'words-after-audio',
    'words-after-complete',
    'all-after-complete',
  ] as const)('stores one caller message and the agent’s whole reply when Gemini sends them %s', async (order) => {
    gemini.script.push({ caller: 'Can you move my delivery to Thursday?', reply: [{ text: 'Of course, I can move your delivery to Thursday.' }], order });
    const callId = await liveCall();
    const { caller } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 8, 'the whole reply');
    const { conversation_id: conversationId } = await callRow(callId);
    const stored = [
      { role: 'user', content: 'Can you move my delivery to Thursday?' },
      { role: 'assistant', content: 'Of course, I can move your delivery to Thursday.' },
    ];
    expect(await transcript(conversationId!, 2)).toEqual(stored);
    caller.hangUp();
    await eventually(
      () => acme.rest.get(`/api/conversations/${conversationId}`),
      (res) => res.body.status === 'ended',
      'the conversation’s end',
    );
    // Nothing more once the call ended: no second caller message, no second reply.
    expect(await transcript(conversationId!, 2)).toEqual(stored);
  });

  // Interrupted, a turn goes "interrupted > turn_complete" (no generationComplete); its lagging words come after the cut, before or after turnComplete.
  it.each(['words-after-audio', 'words-after-complete', 'all-after-complete'] as const)(
    'stores a reply cut by barge-in as far as it was heard when its words come %s',
    async (order) => {
      const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(' ');
      gemini.script.push({ caller: 'Tell me everything about your shop.', reply: [{ text: words }], paceMs: 60, order });
      const callId = await liveCall();
      const { caller } = await openStream(callId);
      await caller.sendAudio(callerSpeech(600, 400));
      await caller.waitFor(() => caller.events('media').length >= 3, 'the start of the reply');
      await caller.sendAudio(callerSpeech(300, 0));
      await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
      const { conversation_id: conversationId } = await eventually(
        () => callRow(callId),
        (row) => Boolean(row.conversation_id),
        'the conversation link',
      );
      const messages = await transcript(conversationId!, 2);
      expect(messages[0]).toEqual({ role: 'user', content: 'Tell me everything about your shop.' });
      const clearIndex = caller.received.findIndex((message) => message.event === 'clear');
      const mediaBeforeClear = caller.received.slice(0, clearIndex).filter((message) => message.event === 'media').length;
      // Every word came after its audio (and after the cut): the words heard are kept, in order, not the rest.
      const kept = messages[1]!.content.split(' ');
      expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `word${i + 1}`));
      expect(kept.length).toBeGreaterThanOrEqual(1);
      expect(kept.length).toBeLessThanOrEqual(mediaBeforeClear + 1);
      expect(messages[1]!.content).not.toContain('word20');
      caller.hangUp();
    },
  );

  it('sends an extended-thinking model its thinking level and asynchronous tools, answered when idle', async () => {
    const thinker = await acme.rest.post('/api/agents', {
      name: 'Ada thinks',
      instructions: INSTRUCTIONS,
      modelConfig: { model: 'google/gemini-3.8-live-extended-thinking' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' },
      resolutionCriteria: [{ label: 'Booked', description: 'The caller booked a visit' }],
    });
    expect(thinker.status).toBe(201);
    gemini.script.push({
      caller: 'Book me for Monday.',
      reply: [{ text: 'Booked.' }],
      tools: [{ name: 'reach_resolution', args: { label: 'Booked', explanation: 'Monday' } }],
    });
    const callId = await insertLiveCall({ org: acme, agentId: thinker.body.id, contactId, connectionId });
    const { caller, session } = await openStream(callId);
    expect(session.setup).toMatchObject({
      model: 'models/gemini-3.8-live-extended-thinking',
      generationConfig: { thinkingConfig: { thinkingLevel: 'MEDIUM' } },
    });
    const declarations = session.setup!.tools.flatMap((tool: { functionDeclarations: { behavior: string }[] }) => tool.functionDeclarations);
    expect(declarations.map((declaration: { behavior: string }) => declaration.behavior)).toEqual(declarations.map(() => 'NON_BLOCKING'));
    await caller.sendAudio(callerSpeech(600, 400));
    const answer = await session.waitFor('toolResponse');
    expect(answer.toolResponse.functionResponses).toEqual([expect.objectContaining({ name: 'reach_resolution', scheduling: 'WHEN_IDLE' })]);
    caller.hangUp();
  });

  it('ends the call failed with the provider’s words when Gemini refuses the session', async () => {
    gemini.refuseWith = { code: 1008, reason: 'API key not valid. Please pass a valid API key.' };
    const callId = await liveCall();
    const { url, callSid } = await answeredStream(callId);
    const opened = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(opened instanceof MediaStreamClient)) throw new Error('refused');
    opened.start(callId, callSid);
    expect((await opened.closed).code).toBe(1011);
    const row = await eventually(
      () => callRow(callId),
      (value) => value.status === 'failed',
      'the failed call',
    );
    expect(row.error_text).toBe('The realtime provider refused the session (code 1008: API key not valid. Please pass a valid API key.)');
  });
});

function closeCodeWithin(client: MediaStreamClient, ms: number): Promise<number | 'still open'> {
  return Promise.race([client.closed.then((closed) => closed.code), new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms))]);
}

describe('an outbound campaign call on Gemini Live', () => {
  it('is placed through Twilio, streamed to Gemini, talked through and hung up by the agent, its transcript the conversation', async () => {
    // The call stays answered until the agent has hung up (it holds until `release`), however long
    // that takes on a busy machine; then the carrier reports its end at once.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    twilioFake.script(() => ({ outcome: 'answered', holdUntil: held }));
    gemini.script.push({ caller: 'Hello, who is calling?', reply: [{ text: 'Ada from the Acme shop. Goodbye!' }], tools: [{ name: 'end_call', args: {} }] });
    const campaign = await voiceCampaign(acme, twilioFake, { agentId });
    const runner = testRunner(app, { intervalMs: 20 });
    // Set up while Twilio fetches the answer, before the stream (issue #45).
    const next = gemini.nextSession();
    runner.start();
    try {
      const [call] = await eventually(
        () =>
          app.sql<{ id: string; carrier_call_id: string }>(`select id, carrier_call_id from calls where execution_id = ? and status = 'in_progress'`, [
            campaign.executionId,
          ]),
        (rows) => rows.length === 1,
        'the answered call',
      );
      // The stream Twilio was told to open when it asked the answer URL.
      const twiml = await eventually(
        async () => twilioFake.calls().find((placed) => placed.sid === call!.carrier_call_id)?.twiml ?? null,
        Boolean,
        'the answer TwiML',
      );
      const url = unescapeXml(/<Stream url="([^"]+)"/.exec(twiml!)![1]!);
      const caller = await MediaStreamClient.open(url, twilioFake.authToken);
      if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
      caller.start(call!.id, call!.carrier_call_id);
      await (await next).waitFor('setup');
      await caller.sendAudio(callerSpeech(600, 400));
      expect((await caller.closed).code).toBe(1000);
      expect(caller.heard()).toHaveLength(6);
      release();
      const execution = await waitForExecution(acme, campaign.executionId, (body) => body.status === 'completed');
      expect(execution).toMatchObject({ contactsCompleted: 1, contactsFailed: 0 });
      const row = await callRow(call!.id);
      expect(row.status).toBe('completed');
      expect(await transcript(row.conversation_id!, 2)).toEqual([
        { role: 'user', content: 'Hello, who is calling?' },
        { role: 'assistant', content: 'Ada from the Acme shop. Goodbye!' },
      ]);
    } finally {
      release();
      await runner.stop();
    }
    await twilioFake.settled();
  }, 30_000);
});

describe('activation with stsProvider google', () => {
  it('activates a program whose agent speaks through Gemini Live once GEMINI_API_KEY is set', async () => {
    const audience = await createAudience(acme, 1);
    const program = await acme.rest.post('/api/programs', { name: 'Gemini calls', kind: 'campaign', audienceId: audience.id, agentId });
    expect(program.status).toBe(201);
    const { activateProgram } = await acme.graphql.ok(ActivateProgramDocument, { id: program.body.id });
    expect(activateProgram.status).toBe('active');
  });
});

describe('the first message on Gemini Live', () => {
  it('is asked for word for word as realtime text input (clientContent would close a 3.x session), heard first, stored first, and timed from the answer', async () => {
    const greeter = await acme.rest.post('/api/agents', {
      name: 'Greeter',
      instructions: 'You remind {{contact.name}} of their visit.',
      modelConfig: { model: 'google/gemini-3.8-live' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' },
      firstMessage: 'Hello {{contact.name}}, this is {{agent.name}}.',
    });
    expect(greeter.status).toBe(201);
    const [contact] = await app.sql<{ name: string }>('select name from contacts where id = ?', [contactId]);
    const line = `Hello ${contact!.name}, this is Greeter.`;
    gemini.script.push({ caller: 'Hi there', reply: [{ text: 'Good to hear you.' }] });
    const callId = await liveCall(greeter.body.id);
    const { caller, session } = await openStream(callId);
    expect(session.setup!.systemInstruction.parts[0].text).toContain(`You remind ${JSON.stringify(contact!.name)} of their visit.`);
    const asked = await session.waitFor('realtimeInput', (message) => typeof message.realtimeInput.text === 'string');
    expect(asked.realtimeInput.text).toContain(JSON.stringify(line));
    const words = line.split(' ').length;
    await caller.waitFor(() => caller.events('media').length >= words, 'the first message');
    expect(Math.abs(frequency(Buffer.from(String(caller.events('media')[0]!.media.payload), 'base64')) - GEMINI_FIRST_LINE_HZ)).toBeLessThan(30);
    await caller.sendAudio(callerSpeech(600, 400));
    const row = await eventually(
      () => callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation link',
    );
    expect(await transcript(row.conversation_id!, 3)).toEqual([
      { role: 'assistant', content: line },
      { role: 'user', content: 'Hi there' },
      { role: 'assistant', content: 'Good to hear you.' },
    ]);
    caller.stop();
    caller.hangUp();
    const latency = (
      await eventually(
        () => acme.rest.get(`/api/calls/${callId}`),
        (res) => res.body.turnLatency !== null,
        'the call’s latency',
      )
    ).body.turnLatency;
    expect(latency.firstAudioMs).toBeGreaterThanOrEqual(5000);
    expect(gemini.problems).toEqual([]);
  });

  it('is set up and asked for before the stream starts (issue #45): its audio, made meanwhile, reaches the caller right after `start`, on that one session', async () => {
    const greeter = await acme.rest.post('/api/agents', {
      name: 'Early greeter',
      instructions: INSTRUCTIONS,
      modelConfig: { model: 'google/gemini-3.8-live' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' },
      firstMessage: 'Hello, this is the Acme shop.',
    });
    expect(greeter.status).toBe(201);
    const callId = await liveCall(greeter.body.id);
    const { url, callSid, session } = await answeredWithSession(callId);
    await session.waitFor('realtimeInput', (message) => typeof message.realtimeInput.text === 'string');
    // Gemini answered the realtime text with audio while no stream existed yet.
    await eventually(
      async () => session.audioSentAt.length,
      (parts) => parts > 0,
      'the first message’s audio made before the stream',
    );
    const sessions = gemini.sessions.length;
    const caller = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
    const startSentAt = performance.now();
    caller.start(callId, callSid);
    await caller.waitFor(() => caller.events('media').length > 0, 'the first message at the carrier');
    // Made before the start, held, and sent on it: the caller sent nothing, and no session of the stream's own was opened.
    expect(session.audioSentAt[0]!).toBeLessThan(startSentAt);
    expect(session.appendedAt).toEqual([]);
    expect(Math.abs(frequency(Buffer.from(String(caller.events('media')[0]!.media.payload), 'base64')) - GEMINI_FIRST_LINE_HZ)).toBeLessThan(30);
    expect(gemini.sessions.length).toBe(sessions);
    const row = await eventually(
      () => callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation link',
    );
    expect(await transcript(row.conversation_id!, 1)).toEqual([{ role: 'assistant', content: 'Hello, this is the Acme shop.' }]);
    caller.hangUp();
    await session.closed;
  });
});
