import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeRealtime, WORD_MS, type FakeRealtime, type FakeRealtimeSession } from '../support/fake-openai-realtime.js';
import { startFakeDeepgram, type FakeDeepgram } from '../support/fake-deepgram.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { decodeDtmf } from '../support/goertzel.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { eventually, stsHelpers } from './sts-fixtures.js';
import { KEY_TONE_MS } from '../../src/modules/voice/keypad/dtmf-tones.js';

// The keypad both ways on a live Twilio call, through the real doors: the caller's keys (Twilio
// Media Streams `dtmf` messages) reach the agent's model as one line a batch and are stored; the
// agent's send_digits plays touch tones into the call's outgoing audio, which the test decodes with
// its Goertzel receiver (test/support/goertzel.ts), and the digits are stored. Speech to speech on
// the OpenAI Realtime double, and the streaming pipeline on the Deepgram and ElevenLabs doubles
// (builtin/echo, which calls the tool a caller's line names). Every double checks what the gateway
// sends against its provider's published description. PGlite, and PostgreSQL with TEST_DATABASE_URL.

const DEEPGRAM_KEY = 'dg-test-key-keypad';
const ELEVENLABS_KEY = 'xi-test-key-keypad';
const GEMINI_KEY = 'gemini-test-key-keypad';
const GREETING = 'Hello, this is the Acme line.';

let twilioFake: FakeTwilio;
let realtime: FakeRealtime;
let gemini: FakeGeminiLive;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let app: TestApp;
let acme: TestOrganization;
let connectionId: string;
let stsAgentId: string;
let geminiAgentId: string;
let streamingAgentId: string;
let contactId: string;

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  realtime = await startFakeRealtime();
  gemini = await startFakeGeminiLive(GEMINI_KEY);
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  app = await startTwilioApp(twilioFake, undefined, {
    providers: {
      openaiApiKey: 'sk-test-realtime-key',
      openaiRealtimeUrl: realtime.url,
      geminiApiKey: GEMINI_KEY,
      geminiBaseUrl: gemini.baseUrl,
      deepgramApiKey: DEEPGRAM_KEY,
      deepgramBaseUrl: deepgram.baseUrl,
      elevenlabsApiKey: ELEVENLABS_KEY,
      elevenlabsBaseUrl: elevenlabs.baseUrl,
    },
  });
  acme = await app.organization('Acme keypad');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const agent = async (fields: Record<string, unknown>) => {
    const created = await acme.rest.post('/api/agents', { name: 'Menu rider', instructions: 'You get through phone menus.', ...fields });
    expect(created.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  };
  stsAgentId = await agent({
    modelConfig: { model: 'openai/gpt-realtime' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' },
    firstMessageMode: 'wait_for_caller',
  });
  geminiAgentId = await agent({
    modelConfig: { model: 'google/gemini-3.8-live' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' },
    firstMessageMode: 'wait_for_caller',
  });
  streamingAgentId = await agent({
    firstMessage: GREETING,
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' },
  });
  contactId = (await createAudience(acme, 1)).contactIds[0]!;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await realtime?.close();
  await gemini?.close();
  await deepgram?.close();
  await elevenlabs?.close();
  await twilioFake?.close();
});

beforeEach(() => {
  realtime.script.length = 0;
  realtime.problems.length = 0;
  gemini.script.length = 0;
  gemini.problems.length = 0;
  deepgram.clearScript();
  deepgram.problems.length = 0;
  elevenlabs.reset();
  elevenlabs.faults.speed = 4;
  elevenlabs.problems.length = 0;
});

afterEach(() => {
  expect(realtime.problems).toEqual([]);
  expect(gemini.problems).toEqual([]);
  expect(deepgram.problems.filter((problem) => problem.kind !== 'handshake')).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
});

const { liveCall, answeredStream, callRow, transcript } = stsHelpers(() => ({ app, twilioFake, acme }));

async function openStream(agentId: string): Promise<{ callId: string; caller: MediaStreamClient }> {
  const callId = await liveCall({ org: acme, agentId, contactId, connectionId });
  const { url, callSid } = await answeredStream(callId);
  const caller = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
  caller.start(callId, callSid);
  return { callId, caller };
}

async function openSts(): Promise<{ callId: string; caller: MediaStreamClient; session: FakeRealtimeSession }> {
  const next = realtime.nextSession();
  const opened = await openStream(stsAgentId);
  const session = await next;
  await session.waitFor('session.update');
  return { ...opened, session };
}

/** Everything the gateway sent the caller, as one μ-law buffer. */
function sentAudio(caller: MediaStreamClient): Buffer {
  return Buffer.concat(caller.frames.map((frame) => frame.payload));
}

/**
 * The keys heard in what the gateway sent, once `count` are whole: the gap after the last has begun to
 * arrive (a tone decoded from its first frames alone would seem short).
 */
async function keysSent(caller: MediaStreamClient, count: number): Promise<{ key: string; startMs: number; endMs: number }[]> {
  const whole = () => {
    const audio = sentAudio(caller);
    const keys = decodeDtmf(audio);
    return keys.length >= count && audio.length / 8 - keys[count - 1]!.endMs >= 20;
  };
  await caller.waitFor(whole, `${count} whole touch tones`);
  return decodeDtmf(sentAudio(caller));
}

/** The stored transcript of `messages` messages, read after hanging up (or, `afterStored`, before: what is stored once heard is waited for). */
async function hangUpAndRead(callId: string, caller: MediaStreamClient, messages: number, options: { afterStored?: boolean } = {}) {
  if (!options.afterStored) {
    caller.hangUp();
    await caller.closed;
  }
  const row = await eventually(
    () => callRow(callId),
    (call) => call.conversation_id !== null,
    'the call’s conversation',
  );
  const stored = await transcript(row.conversation_id!, messages);
  caller.hangUp();
  await caller.closed;
  return stored;
}

describe('the keypad on a speech-to-speech call (OpenAI Realtime)', () => {
  it('the caller’s keys reach the model as one line ("1234#"), which it answers; the line is stored as the caller’s', async () => {
    realtime.script.push({ caller: '', reply: [{ text: 'Account one two three four.' }] });
    const { callId, caller, session } = await openSts();
    for (const key of '1234#') caller.sendDigit(key);
    await session.waitFor('conversation.item.create', (event) => event.item.type === 'message');
    expect(session.texts).toEqual(['[the caller pressed 1234#]']);
    // The model is asked to answer what it read, and its reply is heard.
    await session.waitFor('response.create');
    await caller.waitFor(() => caller.heard().length >= 5, 'the reply to the keys');
    expect(await hangUpAndRead(callId, caller, 2)).toEqual([
      { role: 'user', content: '[the caller pressed 1234#]' },
      { role: 'assistant', content: 'Account one two three four.' },
    ]);
  });

  it('a flood of keys is bounded: a line at most a second, 20 keys a line, the rest counted and not read', async () => {
    realtime.script.push({ caller: '', reply: [{ text: 'One.' }] }, { caller: '', reply: [{ text: 'Two.' }] });
    const { callId, caller, session } = await openSts();
    // 200 keys as fast as the socket takes them, a # after every nine.
    for (let index = 0; index < 200; index++) caller.sendDigit(index % 10 === 9 ? '#' : String(index % 10));
    await eventually(
      async () => session.texts.length,
      (count) => count >= 2,
      'two lines of keys',
    );
    expect(session.texts).toEqual(['[the caller pressed 012345678#]', '[the caller pressed 012345678#012345678# (and 170 more keys, not read)]']);
    const stored = await hangUpAndRead(callId, caller, 4);
    expect(stored.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(session.texts);
  });

  it('send_digits plays the keys as touch tones after what the agent said, stores the digits, and lets the model listen on', async () => {
    realtime.script.push({
      caller: 'For billing press two.',
      reply: [{ text: 'Pressing two.' }],
      tools: [{ name: 'send_digits', arguments: { digits: '2w#' } }],
    });
    const { callId, caller, session } = await openSts();
    await caller.sendAudio(callerSpeech(600, 400));
    const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
    expect(JSON.parse(output.item.output)).toMatchObject({ sent: true, digits: '2w#' });
    const keys = await keysSent(caller, 2);
    expect(keys.map((key) => key.key)).toEqual(['2', '#']);
    // After the reply's two words of audio; each tone about KEY_TONE_MS; the pause `w` between them.
    expect(keys[0]!.startMs).toBeGreaterThanOrEqual(2 * WORD_MS - 30);
    for (const key of keys) expect(key.endMs - key.startMs).toBeGreaterThanOrEqual(KEY_TONE_MS / 2);
    expect(keys[1]!.startMs - keys[0]!.startMs).toBeGreaterThanOrEqual(600);
    // The model was not asked to speak after pressing: it listens to the menu. (The one response.create
    // answered the caller's turn: the gateway asks for replies itself, voice.md › Interruptions.)
    const creates = session.received.filter((event) => event.type === 'response.create');
    expect(creates).toEqual([{ type: 'response.create' }]);
    expect(session.received.indexOf(creates[0]!)).toBeLessThan(session.received.indexOf(output));
    expect(await hangUpAndRead(callId, caller, 3)).toEqual([
      { role: 'user', content: 'For billing press two.' },
      { role: 'assistant', content: 'Pressing two.' },
      { role: 'assistant', content: '[the agent pressed 2w#]' },
    ]);
  });

  it('send_digits with a character outside 0-9 * # w presses nothing and tells the model, which speaks to it', async () => {
    realtime.script.push({
      caller: 'Enter your code.',
      reply: [{ text: 'Let me try.' }],
      tools: [{ name: 'send_digits', arguments: { digits: '12 then A' } }],
      afterTools: (outputs) => [{ text: outputs[0]!.sent === false ? 'I could not press those keys.' : 'Pressed.' }],
    });
    const { callId, caller, session } = await openSts();
    await caller.sendAudio(callerSpeech(600, 400));
    const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
    expect(JSON.parse(output.item.output)).toEqual({ sent: false, error: expect.stringContaining('not " thenA"') });
    await session.waitFor('response.create');
    await caller.waitFor(() => caller.heard().length >= 3 + 6, 'the reply to the error');
    expect(decodeDtmf(sentAudio(caller))).toEqual([]);
    expect(await hangUpAndRead(callId, caller, 3)).toEqual([
      { role: 'user', content: 'Enter your code.' },
      { role: 'assistant', content: 'Let me try.' },
      { role: 'assistant', content: 'I could not press those keys.' },
    ]);
  });
});

describe('the keypad on a speech-to-speech call (Gemini Live)', () => {
  it('the caller’s keys reach the model as realtime text, one line, which it answers; the line is stored as the caller’s', async () => {
    gemini.script.push({ caller: '', reply: [{ text: 'Extension nine.' }] });
    const next = gemini.nextSession();
    const { callId, caller } = await openStream(geminiAgentId);
    const session = await next;
    await session.waitFor('setup');
    for (const key of '9#') caller.sendDigit(key);
    expect(await hangUpAndRead(callId, caller, 2, { afterStored: true })).toEqual([
      { role: 'user', content: '[the caller pressed 9#]' },
      { role: 'assistant', content: 'Extension nine.' },
    ]);
    expect(session.texts).toEqual(['[the caller pressed 9#]']);
  });
});

describe('the keypad on a streaming call (Deepgram, builtin/echo, ElevenLabs)', () => {
  /** The greeting was played to its end: the caller's side echoed its last mark, and the gateway stored it as heard. */
  async function greetingPlayed(callId: string): Promise<void> {
    const row = await eventually(
      () => callRow(callId),
      (call) => call.conversation_id !== null,
      'the call’s conversation',
    );
    expect(await transcript(row.conversation_id!, 1)).toEqual([{ role: 'assistant', content: GREETING }]);
  }

  it('the caller’s keys are one line the model answers, stored as the caller’s', async () => {
    const { callId, caller } = await openStream(streamingAgentId);
    await greetingPlayed(callId);
    for (const key of '1234#') caller.sendDigit(key);
    await eventually(
      async () => elevenlabs.texts.join(' '),
      (text) => text.includes('1234#'),
      'the answer to the keys',
    );
    // The answer is stored once the caller's side has played it to its end.
    expect(await hangUpAndRead(callId, caller, 3, { afterStored: true })).toEqual([
      { role: 'assistant', content: GREETING },
      { role: 'user', content: '[the caller pressed 1234#]' },
      { role: 'assistant', content: 'Echo: [the caller pressed 1234#]' },
    ]);
  });

  it('send_digits (the model’s tool call) plays touch tones once its reply was heard, and the digits are stored', async () => {
    deepgram.script(['call send_digits {"digits": "9*0"}']);
    const { callId, caller } = await openStream(streamingAgentId);
    await greetingPlayed(callId);
    await caller.sendAudio(callerSpeech(600, 700), 2);
    const keys = await keysSent(caller, 3);
    expect(keys.map((key) => key.key)).toEqual(['9', '*', '0']);
    const stored = await hangUpAndRead(callId, caller, 4);
    expect(stored.slice(1, 2)).toEqual([{ role: 'user', content: 'call send_digits {"digits": "9*0"}' }]);
    expect(stored[2]!.content).toMatch(/^Echo: send_digits answered \{"sent":true,"digits":"9\*0"/);
    expect(stored[3]).toEqual({ role: 'assistant', content: '[the agent pressed 9*0]' });
  });
});
