import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';
import { startFakeDeepgram, type FakeDeepgram } from '../support/fake-deepgram.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { callerSpeech } from '../support/media-stream-client.js';
import { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import { testRunner } from '../runner/fixtures.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';

// A streaming agent (Deepgram + model + ElevenLabs) on a Telnyx call, through the real doors: the
// call placed on REST through the loopback Telnyx (checked against its vendored OpenAPI), the
// answer's TeXML <Connect><Stream bidirectionalMode="rtp">, and Telnyx's side of the media stream
// (test/support/telnyx-media-caller.ts: Telnyx's frames as its Media Streaming page describes them,
// played in real time, marks returned once played, a clear returning the queued ones). The Deepgram
// and ElevenLabs doubles check what they are sent against their providers' AsyncAPIs.

const GREETING = 'Hello, this is Ada on Telnyx. How can I help you?';
const DEEPGRAM_KEY = 'dg-test-key-telnyx-streaming';
const ELEVENLABS_KEY = 'xi-test-key-telnyx-streaming';

let telnyx: FakeTelnyx;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let from: string;
let agentId: string;
let runner: CampaignRunner;

const randomNumber = () => `+1415${String(Math.floor(Math.random() * 9_000_000) + 1_000_000)}`;

beforeAll(async () => {
  telnyx = await startFakeTelnyx();
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  app = await startTestApp({
    // No Twilio here: its API base is an address nothing answers on.
    telephony: { twilioApiBaseUrl: 'http://127.0.0.1:9', telnyxApiBaseUrl: telnyx.url, credentialsKey: randomBytes(32), publicUrl: undefined },
    providers: { deepgramApiKey: DEEPGRAM_KEY, deepgramBaseUrl: deepgram.baseUrl, elevenlabsApiKey: ELEVENLABS_KEY, elevenlabsBaseUrl: elevenlabs.baseUrl },
  });
  app.config.telephony.publicUrl = app.baseUrl;
  acme = await app.organization('Acme Telnyx streaming');
  other = await app.organization('Other Telnyx streaming');
  await acme.grantCredits(20);
  const connection = await acme.rest.post('/api/carrier-connections', {
    name: 'Telnyx',
    carrier: 'telnyx',
    accountSid: telnyx.accountSid,
    authToken: telnyx.apiKey,
    publicKey: telnyx.publicKey,
    applicationId: '2000000000000000002',
  });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  from = randomNumber();
  expect((await acme.rest.post('/api/phone-numbers', { number: from, carrierConnectionId: connectionId })).status).toBe(201);
  const agent = await acme.rest.post('/api/agents', {
    name: 'Ada streaming on Telnyx',
    instructions: 'You answer callers of the Acme shop.',
    firstMessage: GREETING,
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' },
  });
  expect(agent.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  agentId = agent.body.id;
  runner = testRunner(app, { intervalMs: 20 });
  runner.start();
}, 60_000);

afterAll(async () => {
  await telnyx?.settled();
  await runner?.stop();
  await app?.close();
  await Promise.all([telnyx?.close(), deepgram?.close(), elevenlabs?.close()]);
});

beforeEach(() => {
  deepgram.clearScript();
  elevenlabs.reset();
  elevenlabs.faults.speed = 4;
});

afterEach(() => {
  expect(deepgram.problems.filter((problem) => problem.kind !== 'handshake')).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
});

const callOnceItIs = (id: string, done: (call: Record<string, any>) => boolean, what: string) =>
  eventually(async () => (await acme.rest.get(`/api/calls/${id}`)).body as Record<string, any>, done, { what, everyMs: 20 });

/** Places a call of the streaming agent and opens its stream as Telnyx does: the caller, the call id and Telnyx's call. */
async function streamingCall(hold: Promise<void>): Promise<{ caller: TelnyxMediaCaller; callId: string; callSid: string }> {
  telnyx.script(() => ({ outcome: 'answered', durationSeconds: 6, holdUntil: hold }));
  const to = randomNumber();
  const placed = await acme.rest.post('/api/calls', { to, agentId, from });
  expect(placed.status).toBe(201);
  const documents = await eventually(
    () => telnyx.calls().find((call) => call.to === to)?.documents ?? [],
    (list) => list.some((document) => document.texml.includes('<Stream')),
    { what: 'the stream TeXML' },
  );
  const texml = documents.find((document) => document.texml.includes('<Stream'))!.texml;
  expect(texml).toMatch(/<Connect><Stream [^>]*bidirectionalMode="rtp"[^>]*bidirectionalCodec="PCMU"/);
  const url = /<Stream url="([^"]+)"/.exec(texml)![1]!.replaceAll('&amp;', '&');
  const call = telnyx.calls().find((each) => each.to === to)!;
  const caller = await TelnyxMediaCaller.open(url);
  if (!(caller instanceof TelnyxMediaCaller)) throw new Error(`refused: ${caller.refused}`);
  caller.start(call.sid, placed.body.id);
  return { caller, callId: placed.body.id, callSid: call.sid };
}

/** Until Telnyx has returned `count` marks of finished replies (`r<n>:done`): the caller heard them to the end. */
const repliesHeard = (caller: TelnyxMediaCaller, count: number) =>
  caller.waitFor(() => caller.returnedMarks.filter((name) => /:done$/.test(name)).length >= count, `${count} replies played`);

describe('a streaming agent on a Telnyx call', () => {
  it('greets, hears the caller through Deepgram, answers through ElevenLabs in Telnyx’s frames, and stores both sides', async () => {
    let hangUp!: () => void;
    const held = new Promise<void>((resolve) => (hangUp = resolve));
    deepgram.script(['Can I book a visit on Monday?']);
    const { caller, callId, callSid } = await streamingCall(held);
    const session = await deepgram.nextSession();
    expect(Object.fromEntries(session.query)).toMatchObject({ encoding: 'mulaw', sample_rate: '8000', channels: '1' });
    await repliesHeard(caller, 1);
    await caller.sendAudio(callerSpeech(600, 700), 20);
    await repliesHeard(caller, 2);

    expect(elevenlabs.texts.map((text) => text.trim())).toEqual([GREETING, 'Echo: Can I book a visit on Monday?']);
    // What Telnyx was sent is its own frames, every media 20 ms to 30 s of audio, no Twilio streamSid.
    expect(caller.problems).toEqual([]);
    expect(caller.events('media').length).toBeGreaterThan(0);
    // Nothing was cleared: the caller heard every frame it was sent.
    expect(caller.heard()).toHaveLength(caller.events('media').length);
    expect(caller.events('clear')).toEqual([]);
    const row = await callOnceItIs(callId, (value) => Boolean(value.conversationId), 'the conversation link');
    const messages = await eventually(
      async () => (await acme.rest.get(`/api/conversations/${row.conversationId}/messages?limit=10`)).body.data as { role: string; content: string }[],
      (list) => list.length === 3,
      { what: 'the transcript' },
    );
    expect(messages.map((message) => [message.role, message.content])).toEqual([
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
    expect((await other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
  }, 30_000);

  it('clears Telnyx’s queued audio when the caller speaks over the agent, and keeps only what was heard', async () => {
    let hangUp!: () => void;
    const held = new Promise<void>((resolve) => (hangUp = resolve));
    const long = 'Tell me everything about the opening hours of the shop on weekdays, at weekends and on public holidays, please.';
    deepgram.script([long, 'Stop, that is enough.']);
    elevenlabs.faults.speed = 1;
    const { caller, callId } = await streamingCall(held);
    await repliesHeard(caller, 1);
    await caller.sendAudio(callerSpeech(600, 700), 20);
    // Telnyx has played a first part of the echo of the long question: the caller speaks over the rest.
    await caller.waitFor(() => caller.returnedMarks.some((name) => name.startsWith('r2:')), 'the answer playing');
    await caller.sendAudio(callerSpeech(600, 700), 20);
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    await repliesHeard(caller, 3);
    expect(caller.problems).toEqual([]);
    const row = await callOnceItIs(callId, (value) => Boolean(value.conversationId), 'the conversation link');
    const messages = await eventually(
      async () => (await acme.rest.get(`/api/conversations/${row.conversationId}/messages?limit=10`)).body.data as { role: string; content: string }[],
      (list) => list.length >= 5,
      { what: 'the transcript' },
    );
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
