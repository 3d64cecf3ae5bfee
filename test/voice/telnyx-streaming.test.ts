import type { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import { callerSpeech } from '../support/media-stream-client.js';
import {
  providerProblems,
  resetProviders,
  startTelnyxVoice,
  stopTelnyxVoice,
  streamingAgent,
  telnyxVoiceHelpers,
  type TelnyxVoiceWorld,
} from './telnyx-fixtures.js';

// A streaming agent (Deepgram + model + ElevenLabs) on a Telnyx call, through the real doors: the
// call placed on REST through the loopback Telnyx (checked against its vendored OpenAPI), the
// answer's TeXML <Connect><Stream bidirectionalMode="rtp">, and Telnyx's side of the media stream
// (test/support/telnyx-media-caller.ts: Telnyx's frames as its Media Streaming page describes them,
// played in real time, marks returned once played, a clear returning the queued ones). The Deepgram
// and ElevenLabs doubles check what they are sent against their providers' AsyncAPIs.

const GREETING = 'Hello, this is Ada on Telnyx. How can I help you?';
const DEEPGRAM_KEY = 'dg-test-key-telnyx-streaming';
const ELEVENLABS_KEY = 'xi-test-key-telnyx-streaming';

let world: TelnyxVoiceWorld;
let agentId: string;

beforeAll(async () => {
  world = await startTelnyxVoice('Telnyx streaming', { deepgram: DEEPGRAM_KEY, elevenlabs: ELEVENLABS_KEY });
  agentId = await streamingAgent(world, { name: 'Ada streaming on Telnyx', instructions: 'You answer callers of the Acme shop.', firstMessage: GREETING });
}, 60_000);

afterAll(() => stopTelnyxVoice(world));
beforeEach(() => resetProviders(world));
afterEach(() => expect(providerProblems(world)).toEqual([]));

const { callOnceItIs, repliesHeard, transcript, ...helpers } = telnyxVoiceHelpers(() => world);

/** Places a call of the streaming agent and opens its stream as Telnyx does (bidirectional, PCMU): the caller, the call id and Telnyx's call. */
async function streamingCall(hold: Promise<void>): Promise<{ caller: TelnyxMediaCaller; callId: string; callSid: string }> {
  const opened = await helpers.streamingCall(agentId, { outcome: 'answered', durationSeconds: 6, holdUntil: hold });
  const texml = opened.call.documents.find((document) => document.texml.includes('<Stream'))!.texml;
  expect(texml).toMatch(/<Connect><Stream [^>]*bidirectionalMode="rtp"[^>]*bidirectionalCodec="PCMU"/);
  return opened;
}

describe('a streaming agent on a Telnyx call', () => {
  it('greets, hears the caller through Deepgram, answers through ElevenLabs in Telnyx’s frames, and stores both sides', async () => {
    let hangUp!: () => void;
    const held = new Promise<void>((resolve) => (hangUp = resolve));
    world.deepgram.script(['Can I book a visit on Monday?']);
    const { caller, callId, callSid } = await streamingCall(held);
    const session = await world.deepgram.nextSession();
    expect(Object.fromEntries(session.query)).toMatchObject({ encoding: 'mulaw', sample_rate: '8000', channels: '1' });
    await repliesHeard(caller, 1);
    await caller.sendAudio(callerSpeech(600, 700), 20);
    await repliesHeard(caller, 2);

    expect(world.elevenlabs.texts.map((text) => text.trim())).toEqual([GREETING, 'Echo: Can I book a visit on Monday?']);
    // What Telnyx was sent is its own frames, every media 20 ms to 30 s of audio, no Twilio streamSid.
    expect(caller.problems).toEqual([]);
    expect(caller.events('media').length).toBeGreaterThan(0);
    // Nothing was cleared: the caller heard every frame it was sent.
    expect(caller.heard()).toHaveLength(caller.events('media').length);
    expect(caller.events('clear')).toEqual([]);
    expect(await transcript(callId, 3)).toEqual([
      ['assistant', GREETING],
      ['user', 'Can I book a visit on Monday?'],
      ['assistant', 'Echo: Can I book a visit on Monday?'],
    ]);

    caller.stop();
    hangUp();
    // The turn's latency is stored once the stream ends.
    const latency = (await callOnceItIs(callId, (value) => value.turnLatency !== null, 'the turn latency')).turnLatency;
    expect(latency).toMatchObject({ provider: 'deepgram+elevenlabs', bargeIns: 0 });
    expect(latency.turns).toHaveLength(1);
    const ended = await callOnceItIs(callId, (value) => !['queued', 'ringing', 'in_progress'].includes(value.status), 'the call’s end');
    expect(ended).toMatchObject({ status: 'completed', carrier: 'telnyx', carrierCallId: callSid });
    expect((await world.other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
  }, 30_000);

  it('clears Telnyx’s queued audio when the caller speaks over the agent, and keeps only what was heard', async () => {
    let hangUp!: () => void;
    const held = new Promise<void>((resolve) => (hangUp = resolve));
    const long = 'Tell me everything about the opening hours of the shop on weekdays, at weekends and on public holidays, please.';
    world.deepgram.script([long, 'Stop, that is enough.']);
    world.elevenlabs.faults.speed = 1;
    const { caller, callId } = await streamingCall(held);
    await repliesHeard(caller, 1);
    await caller.sendAudio(callerSpeech(600, 700), 20);
    // Telnyx has played a first part of the echo of the long question: the caller speaks over the rest.
    await caller.waitFor(() => caller.returnedMarks.some((name) => name.startsWith('r2:')), 'the answer playing');
    await caller.sendAudio(callerSpeech(600, 700), 20);
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    await repliesHeard(caller, 3);
    expect(caller.problems).toEqual([]);
    const messages = (await transcript(callId, 5)).map(([role, content]) => ({ role, content }));
    expect(messages.slice(0, 2).map((message) => [message.role, message.content])).toEqual([
      ['assistant', GREETING],
      ['user', long],
    ]);
    // What was stored of the cut reply is what Telnyx played of it, not the whole echo.
    const cut = messages[2]!;
    expect(cut.role).toBe('assistant');
    expect(`Echo: ${long}`.startsWith(cut.content)).toBe(true);
    expect(cut.content.length).toBeGreaterThan(5);
    expect(cut.content.length).toBeLessThan(`Echo: ${long}`.length - 20);
    expect(messages.slice(3).map((message) => [message.role, message.content])).toEqual([
      ['user', 'Stop, that is enough.'],
      ['assistant', 'Echo: Stop, that is enough.'],
    ]);
    // The queued audio was dropped: the caller heard less than it was sent.
    expect(caller.heard().length).toBeLessThan(caller.frames.length);
    caller.stop();
    hangUp();
    const latency = (await callOnceItIs(callId, (value) => value.turnLatency !== null, 'the turn latency')).turnLatency;
    expect(latency.bargeIns).toBe(1);
    await callOnceItIs(callId, (value) => value.status === 'completed', 'the call’s end');
  }, 30_000);
});
