import { randomUUID } from 'node:crypto';
import { POLICY_WITHHELD } from '../../src/modules/agents/prompt.js';
import { MEDIA_LIMITS } from '../../src/modules/voice/realtime/media-limits.js';
import { performance } from 'node:perf_hooks';
import { postAsTwilio } from '../support/twilio-webhook.js';
import { ConversationDocument, StsCallDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import {
  AGENT_HZ,
  FIRST_LINE_HZ,
  frequency,
  startFakeRealtime,
  WORD_MS,
  type FakeRealtime,
  type FakeRealtimeSession,
} from '../support/fake-openai-realtime.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { startTwilioApp, waitForExecution } from '../telephony/fixtures.js';
import { voiceCampaign } from './fixtures.js';
import { eventually, stsHelpers, unescapeXml } from './sts-fixtures.js';
import { renderStreamTwiml } from '../../src/modules/telephony/carriers/twilio/stream-twiml.js';
import { testRunner } from '../runner/fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { CallConversations } from '../../src/modules/voice/realtime/call-conversation.js';
import { OpenAiSpeechProvider } from '../../src/modules/voice/realtime/openai-realtime.js';
import { PREPARED_FOR_MS, StreamPreparations } from '../../src/modules/voice/streaming/stream-preparations.js';

// The speech-to-speech bridge end to end: the fake Twilio's account behind a carrier connection, a
// live call of an sts agent, a Media Streams caller sending real μ-law audio, and the fake OpenAI
// Realtime answering with audio and transcripts. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const INSTRUCTIONS = 'You are Ada, the voice assistant of the Acme shop. Keep answers short.';
const POLICY = 'Never offer a discount above ten percent to anyone.';
const LEAK_HZ = 1200;
const METRICS_TOKEN = 'metrics-token-for-sts-tests';

let twilioFake: FakeTwilio;
let realtime: FakeRealtime;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let otherConnectionId: string;
let agentId: string;
let contactId: string;

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  realtime = await startFakeRealtime();
  app = await startTwilioApp(twilioFake, undefined, {
    providers: { openaiApiKey: 'sk-test-realtime-key', openaiRealtimeUrl: realtime.url },
    metricsToken: METRICS_TOKEN,
  });
  acme = await app.organization('Acme voice');
  other = await app.organization('Other voice');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const otherConnection = await other.rest.post('/api/carrier-connections', {
    name: 'Twilio',
    accountSid: twilioFake.accountSid,
    authToken: twilioFake.authToken,
  });
  expect(otherConnection.status).toBe(201);
  otherConnectionId = otherConnection.body.id;
  const base = await acme.rest.post('/api/knowledge-bases', { name: 'Shop' });
  expect(base.status).toBe(201);
  expect(
    (
      await acme.rest.post(`/api/knowledge-bases/${base.body.id}/documents`, {
        title: 'Opening hours',
        content: 'The shop opens at nine in the morning on weekdays.',
      })
    ).status,
  ).toBe(201);
  const agent = await acme.rest.post('/api/agents', {
    name: 'Ada on the phone',
    instructions: INSTRUCTIONS,
    policy: POLICY,
    modelConfig: { model: 'openai/gpt-realtime' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' },
    // These tests are about the caller's turns; the first message is tested on an agent of its own.
    firstMessageMode: 'wait_for_caller',
    memoryConfig: { enabled: true, lastMessages: 4 },
    knowledgeBaseConfig: { knowledgeBaseId: base.body.id, topK: 1, similarityThreshold: 0 },
    resolutionCriteria: [{ label: 'Booked', description: 'The caller booked a visit' }],
  });
  expect(agent.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  agentId = agent.body.id;
  contactId = (await createAudience(acme, 1)).contactIds[0]!;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await realtime?.close();
  await twilioFake?.close();
});

beforeEach(() => {
  realtime.script.length = 0;
  realtime.refuseWith = null;
  realtime.problems.length = 0;
  realtime.legacyEventNames = false;
  realtime.openDelayMs = 0;
  realtime.holdOpen = null;
});

afterEach(() => {
  // The double checks every event against OpenAI's published GA schemas: the bridge sent none it would refuse.
  expect(realtime.problems).toEqual([]);
});

/** A live (answered) Twilio call of the agent on this connection, as the runner and the answer webhook leave it. */
const { liveCall: insertLiveCall, answeredStream, callRow, transcript, expectTurnLatency } = stsHelpers(() => ({ app, twilioFake, acme }));

function liveCall(options: { org?: TestOrganization; connection?: string; status?: string; agent?: string | null } = {}): Promise<string> {
  const org = options.org ?? acme;
  return insertLiveCall({
    org,
    agentId: options.agent === undefined ? agentId : options.agent,
    contactId: org === acme ? contactId : null,
    connectionId: options.connection ?? connectionId,
    ...(options.status ? { status: options.status } : {}),
  });
}

function mediaUrl(connection = connectionId): string {
  return `${app.baseUrl.replace(/^http/, 'ws')}/telephony/twilio/${connection}/media`;
}

/** How an upgrade ended: refused with its HTTP status, or 'opened' (the socket is then hung up). */
function refusedOrOpened(opened: MediaStreamClient | { refused: number }): { refused: number } | 'opened' {
  if (!(opened instanceof MediaStreamClient)) return opened;
  opened.hangUp();
  return 'opened';
}

/** The close code of a stream, or 'still open' when it is not closed within `ms`. */
function closeCode(client: MediaStreamClient, ms = 3000): Promise<number | 'still open'> {
  return Promise.race([client.closed.then((closed) => closed.code), new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms))]);
}

/** The answer webhook, and the provider's session the gateway opens and configures for it meanwhile, before any stream (issue #45). */
async function answeredWithSession(callId: string, status?: Record<string, string>) {
  const next = realtime.nextSession();
  const answered = await answeredStream(callId, ...(status ? [status] : []));
  const session = await next;
  await session.waitFor('session.update');
  return { ...answered, session };
}

async function openStream(callId: string): Promise<{ caller: MediaStreamClient; session: FakeRealtimeSession }> {
  const { url, callSid, session } = await answeredWithSession(callId);
  const opened = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(opened instanceof MediaStreamClient)) throw new Error(`media stream refused: ${opened.refused}`);
  opened.start(callId, callSid);
  return { caller: opened, session };
}

describe('renderStreamTwiml', () => {
  it('connects the call to its own media stream URL (call id and nonce) on its connection, wss for an https PUBLIC_URL and ws for http', () => {
    const callId = randomUUID();
    const nonce = 'n0nce_-A';
    expect(renderStreamTwiml({ publicUrl: 'https://gw.example.com', connectionId: 'c1', callId, nonce })).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Connect action="https://gw.example.com/telephony/twilio/c1/stream-ended?callId=${callId}" method="POST"><Stream url="wss://gw.example.com/telephony/twilio/c1/media/${callId}/${nonce}"><Parameter name="callId" value="${callId}"/></Stream></Connect></Response>`,
    );
    expect(renderStreamTwiml({ publicUrl: 'http://127.0.0.1:4000/', connectionId: 'c2', callId, nonce })).toContain(
      `url="ws://127.0.0.1:4000/telephony/twilio/c2/media/${callId}/${nonce}"`,
    );
  });
});

describe('a speech-to-speech call', () => {
  it('gives the provider instructions, policy, passages and memory in that order, bridges audio both ways and stores both sides', async () => {
    // An earlier call of the same agent with the same contact: its turns are the agent's memory.
    const earlier = await liveCall({ status: 'completed' });
    const earlierConversation = randomUUID();
    await app.sql(
      `insert into conversations (id, created_at, updated_at, organization_id, agent_id, status, message_count) values (?, now(), now(), ?, ?, 'ended', 2)`,
      [earlierConversation, acme.organizationId, agentId],
    );
    await app.sql('update calls set conversation_id = ? where id = ?', [earlierConversation, earlier]);
    for (const [sequence, role, content] of [
      [1, 'user', 'What time does the shop open?'],
      [2, 'assistant', 'Remembered answer: at nine.'],
    ] as const) {
      await app.sql(
        `insert into messages (id, created_at, updated_at, organization_id, conversation_id, sequence, role, content) values (?, now(), now(), ?, ?, ?, ?, ?)`,
        [randomUUID(), acme.organizationId, earlierConversation, sequence, role, content],
      );
    }

    realtime.script.push({ caller: 'Can I come by tomorrow morning?', reply: [{ text: 'Yes, we open at nine tomorrow.' }] });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);

    expect(session.headers.authorization).toBe('Bearer sk-test-realtime-key');
    expect(session.model).toBe('gpt-realtime');
    const config = session.sessionUpdates()[0]!.session;
    const instructions: string = config.instructions;
    const positions = [INSTRUCTIONS, POLICY, 'Opening hours: The shop opens at nine', 'Remembered answer: at nine.'].map((part) => instructions.indexOf(part));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // OpenAI's GA session shape: μ-law both ways as Twilio sends it, the voice under audio.output.
    expect(config).toMatchObject({
      type: 'realtime',
      output_modalities: ['audio'],
      audio: {
        input: { format: { type: 'audio/pcmu' }, transcription: { model: 'gpt-live-transcribe' }, turn_detection: { type: 'server_vad' } },
        output: { format: { type: 'audio/pcmu' }, voice: 'alloy' },
      },
      tool_choice: 'auto',
    });
    expect(session.headers['openai-beta']).toBeUndefined();
    expect(config.tools.map((tool: { name: string }) => tool.name)).toEqual(['end_call', 'reach_resolution', 'opt_out', 'send_digits']);

    // The caller speaks: every byte reaches the provider, and the agent's words come back as audio.
    const speech = callerSpeech(600, 400);
    await caller.sendAudio(speech);
    await caller.waitFor(() => caller.events('media').length >= 6, 'the agent’s reply');
    expect(session.audio().equals(speech)).toBe(true);
    const heard = caller.heard();
    expect(heard).toHaveLength(6);
    for (const frame of heard) {
      expect(frame.payload.length).toBe((WORD_MS * 8000) / 1000);
      expect(Math.abs(frequency(frame.payload) - AGENT_HZ)).toBeLessThan(20);
    }
    expect(caller.events('media').every((message) => message.streamSid === caller.streamSid)).toBe(true);

    const row = await eventually(
      () => callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation link',
    );
    const messages = await transcript(row.conversation_id!, 2);
    expect(messages).toEqual([
      { role: 'user', content: 'Can I come by tomorrow morning?' },
      { role: 'assistant', content: 'Yes, we open at nine tomorrow.' },
    ]);
    // The next reply sees passages retrieved for what the caller just said.
    const refreshed = await session.waitFor('session.update', (event) => event !== session.sessionUpdates()[0]);
    expect(refreshed.session).toEqual({ type: 'realtime', instructions: expect.stringContaining('Opening hours') });

    // The call names its conversation (GraphQL's Call.conversationId); another organization sees it on neither door.
    expect((await acme.graphql.ok(StsCallDocument, { id: callId })).call.conversationId).toBe(row.conversation_id);
    expect((await other.rest.get(`/api/conversations/${row.conversation_id}`)).status).toBe(404);
    expect((await other.graphql.run(ConversationDocument, { id: row.conversation_id! })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    // The caller hangs up: the conversation keeps what was said, and ends.
    caller.stop();
    caller.hangUp();
    await session.closed;
    const ended = await eventually(
      () => acme.rest.get(`/api/conversations/${row.conversation_id}`),
      (res) => res.body.status === 'ended',
      'the conversation’s end',
    );
    expect(ended.body.messageCount).toBe(2);
  });

  it('records each agent turn’s latency on the call (total, the provider’s share, the gateway’s), the same on both doors, and in /metrics', async () => {
    // The double declares its delay: each reply starts PROVIDER_DELAY_MS after it said the caller stopped.
    const PROVIDER_DELAY_MS = 120;
    const replies = ['Yes.', 'Nine.', 'Bye.'];
    for (const [index, reply] of replies.entries())
      realtime.script.push({ caller: `Question ${index + 1}?`, reply: [{ text: reply }], delayMs: PROVIDER_DELAY_MS });
    const callId = await liveCall();
    const startedAt = Date.now();
    const { caller } = await openStream(callId);
    for (let turn = 1; turn <= replies.length; turn++) {
      await caller.sendAudio(callerSpeech(400, 400));
      await caller.waitFor(() => caller.events('media').length >= turn, `reply ${turn}`);
      // The one-word reply (WORD_MS of audio) has played before the caller speaks again: no barge-in.
      await new Promise((resolve) => setTimeout(resolve, WORD_MS + 50));
    }
    // Nothing is written while the stream is open: the call's record is made as it ends.
    expect((await acme.rest.get(`/api/calls/${callId}`)).body.turnLatency).toBeNull();
    caller.stop();
    caller.hangUp();

    const latency = await expectTurnLatency(callId, { provider: 'openai', turns: replies.length, delayMs: PROVIDER_DELAY_MS, startedAt, other });
    for (const turn of latency.turns) expect(turn.gatewayMs).toBeLessThan(1000);

    // A call without a completed agent turn records none.
    const silent = await liveCall();
    const quiet = await openStream(silent);
    quiet.caller.hangUp();
    await quiet.session.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await acme.rest.get(`/api/calls/${silent}`)).body.turnLatency).toBeNull();
    expect((await acme.graphql.ok(StsCallDocument, { id: silent })).call.turnLatency).toBeNull();

    // Prometheus: the three parts of each turn, by mode and provider.
    const metrics = await (await fetch(`${app.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    for (const part of ['total', 'provider', 'gateway']) {
      const count = new RegExp(`^gateway_voice_turn_latency_seconds_count\\{mode="sts",provider="openai",part="${part}"\\} (\\d+)$`, 'm').exec(metrics);
      expect(Number(count?.[1])).toBeGreaterThanOrEqual(replies.length);
    }
  });

  it('keeps every frame the caller sends from `start` on while the provider’s session opens, and sends them all, byte for byte and in order', async () => {
    // The provider answers its handshake late: the caller's first half second of frames (25) arrives
    // before any session exists. Held until those are sent, not for 600 ms, which a loaded machine
    // spent sending 15.
    let letOpen!: () => void;
    realtime.holdOpen = new Promise<void>((resolve) => (letOpen = resolve));
    const callId = await liveCall();
    const { url, callSid } = await answeredStream(callId);
    const caller = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
    const next = realtime.nextSession();
    caller.start(callId, callSid);
    // Right after `start`, in real time (one 20 ms frame at a time), as Twilio sends them.
    const speech = callerSpeech(1000, 200);
    const sentAt: number[] = [];
    for (let offset = 0; offset < speech.length; offset += 160) {
      await caller.sendAudio(speech.subarray(offset, offset + 160));
      sentAt.push(performance.now());
      if (sentAt.length === 25) letOpen();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    realtime.holdOpen = null;
    const session = await next;
    await caller.waitFor(() => session.audioChunks.length >= sentAt.length, 'every frame at the provider');
    const configuredAt = session.configuredAt!;
    expect(sentAt.filter((at) => at < configuredAt).length).toBeGreaterThanOrEqual(20);
    // Every frame, one append each, in the order sent; none before the session was configured.
    expect(session.audioChunks).toHaveLength(sentAt.length);
    expect(session.audio().equals(speech)).toBe(true);
    expect(session.appendedAt[0]).toBeGreaterThanOrEqual(configuredAt);
    caller.hangUp();
    await session.closed;
  });

  it('clears the caller’s audio and cancels the reply when the caller talks over the agent (barge-in)', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(' ');
    realtime.script.push(
      { caller: 'Tell me everything about your shop.', reply: [{ text: words }], paceMs: 60 },
      { caller: 'Stop, that is enough.', reply: [{ text: 'Sure.' }] },
    );
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 3, 'the start of the reply');
    // The caller interrupts while the reply is still being generated and played: their words (no back-channel) cut it (interruptions.test.ts).
    await caller.sendAudio(callerSpeech(300, 400));
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    const truncate = await session.waitFor('conversation.item.truncate');
    await session.waitFor('response.cancel');
    expect(truncate.audio_end_ms).toBeLessThan(20 * WORD_MS);
    expect(caller.events('clear')[0]!.streamSid).toBe(caller.streamSid);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(caller.events('media').length).toBeLessThan(20);
    // Whether some of the reply was still queued at the clear (and so never heard) depends on how fast
    // the machine delivered it against the caller's wall-clock playback: at load 29 all five frames had
    // played. What the clear guarantees is asserted above (the clear, the truncate, the cancel).

    // What was said of the cut reply is kept, and only that.
    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    const messages = await transcript(conversationId!, 4);
    expect(messages[0]).toEqual({ role: 'user', content: 'Tell me everything about your shop.' });
    expect(messages[1]!.content.startsWith('word1 word2')).toBe(true);
    expect(messages[1]!.content).not.toContain('word20');
    expect(messages.slice(2)).toEqual([
      { role: 'user', content: 'Stop, that is enough.' },
      { role: 'assistant', content: 'Sure.' },
    ]);
    caller.hangUp();
  });

  it('never lets the hidden policy reach the caller’s ears or the transcript', async () => {
    realtime.script.push({
      caller: 'Can I get a discount?',
      reply: [{ text: 'Let me check that for you right now.' }, { text: POLICY, hz: LEAK_HZ }, { text: 'Anything else today?', hz: LEAK_HZ }],
    });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('clear').length === 1, 'a clear');
    await session.waitFor('response.cancel');
    await session.waitFor('response.done' as never, () => true, 10).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The policy's tone never played: what was sent of it was still queued when the clear came.
    const leaked = caller.heard().filter((frame) => Math.abs(frequency(frame.payload) - LEAK_HZ) < 50);
    expect(leaked).toHaveLength(0);
    const sentAfterClear = caller.received.slice(caller.received.indexOf(caller.events('clear')[0]!));
    expect(sentAfterClear.filter((message) => message.event === 'media')).toHaveLength(0);

    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    const messages = await transcript(conversationId!, 2);
    // Withheld whole in the transcript: nothing marks where the policy began.
    expect(messages[1]!.content).toBe(POLICY_WITHHELD);
    expect(JSON.stringify(caller.received).toLowerCase()).not.toContain('discount above');
    caller.hangUp();
  });

  // Security review 4, M2: what the caller said was judged too, so a reply repeating their guesses was cut at the right one.
  it('never cuts the caller’s own words: a reply that repeats their guesses plays whole and is stored as said', async () => {
    const guesses = `Is it: never offer a refund? ${POLICY}`;
    realtime.script.push({ caller: guesses, reply: [{ text: 'You asked:' }, { text: guesses }, { text: 'I cannot say.' }] });
    const callId = await liveCall();
    const { caller } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    const messages = await transcript(conversationId!, 2);
    expect(messages).toEqual([
      { role: 'user', content: guesses },
      { role: 'assistant', content: `You asked: ${guesses} I cannot say.` },
    ]);
    expect(caller.events('clear')).toHaveLength(0);
    caller.hangUp();
  });

  it('records a resolution and hangs up after the goodbye was heard when the agent calls its tools', async () => {
    realtime.script.push({
      caller: 'Please book me a visit on Monday.',
      reply: [{ text: 'You are booked for Monday. Goodbye!' }],
      tools: [
        { name: 'reach_resolution', arguments: { label: 'Booked', explanation: 'Visit booked for Monday' } },
        { name: 'end_call', arguments: { reason: 'done' } },
      ],
    });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    const closed = await caller.closed;
    expect(closed.code).toBe(1000);
    // The goodbye was played whole before the stream closed.
    expect(caller.heard()).toHaveLength(6);
    expect(caller.events('mark').map((message) => message.mark.name)).toEqual(['end_call']);
    const outputs = session.received.filter((event) => event.type === 'conversation.item.create').map((event) => JSON.parse(event.item.output));
    expect(outputs).toEqual([{ recorded: true }, { ending: true }]);

    const { conversation_id: conversationId } = await callRow(callId);
    const rest = await eventually(
      () => acme.rest.get(`/api/conversations/${conversationId}`),
      (res) => res.body.status === 'ended',
      'the conversation’s end',
    );
    expect(rest.body.outcome).toEqual([{ label: 'Booked', met: true, explanation: 'Visit booked for Monday' }]);
    const graphql = await acme.graphql.ok(ConversationDocument, { id: conversationId! });
    expect(graphql.conversation.outcome).toEqual(rest.body.outcome);
    expect(graphql.conversation.status).toBe('ended');
  });

  it('opts the caller out with the opt_out tool: the number goes on the do-not-call list (source call), the contact is opted out, and the call ends after the confirmation', async () => {
    realtime.script.push({
      caller: 'Stop calling me, please.',
      reply: [{ text: 'Understood, we will not call you again. Goodbye.' }],
      tools: [{ name: 'opt_out', arguments: { reason: 'asked' } }],
    });
    const callId = await liveCall();
    const [{ to_number: number }] = (await app.sql<{ to_number: string }>('select to_number from calls where id = ?', [callId])) as [{ to_number: string }];
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    expect((await caller.closed).code).toBe(1000);
    expect(caller.events('mark').map((message) => message.mark.name)).toEqual(['end_call']);
    const outputs = session.received.filter((event) => event.type === 'conversation.item.create').map((event) => JSON.parse(event.item.output));
    expect(outputs).toEqual([{ optedOut: true, ending: true }]);

    const entry = await eventually(
      () => acme.rest.get(`/api/do-not-call/${encodeURIComponent(number)}`),
      (res) => res.status === 200,
      'the do-not-call entry',
    );
    expect(entry.body).toMatchObject({ phone: number, source: 'call', callId, contactId });
    expect((await acme.rest.get(`/api/contacts/${contactId}`)).body.optedOut).toBe(true);
    const events = (await acme.rest.get('/api/events?type=contact.opted_out')).body.data as { payload: Record<string, unknown> }[];
    expect(events.map((event) => event.payload)).toContainEqual(expect.objectContaining({ phone: number, callId, contactId, source: 'call' }));
    expect((await other.rest.get(`/api/do-not-call/${encodeURIComponent(number)}`)).status).toBe(404);
    // The rest of this file calls the same contact.
    await app.sql('update contacts set opted_out = false where id = ?', [contactId]);
    await app.sql('delete from do_not_call_entries where phone = ?', [number]);
  });

  it('still reads the beta names of the audio and transcript events (a proxy or an older endpoint)', async () => {
    realtime.legacyEventNames = true;
    realtime.script.push({ caller: 'Hello?', reply: [{ text: 'Hello from the old names.' }] });
    const callId = await liveCall();
    const { caller } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 5, 'the agent’s reply');
    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    expect(await transcript(conversationId!, 2)).toEqual([
      { role: 'user', content: 'Hello?' },
      { role: 'assistant', content: 'Hello from the old names.' },
    ]);
    caller.hangUp();
  });

  it('refuses a label that is not one of the agent’s resolution criteria', async () => {
    realtime.script.push({ caller: 'Hello?', reply: [{ text: 'Hello there.' }], tools: [{ name: 'reach_resolution', arguments: { label: 'Refunded' } }] });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    const output = await session.waitFor('conversation.item.create');
    expect(JSON.parse(output.item.output)).toEqual({ recorded: false, error: 'label must be one of: Booked' });
    await session.waitFor('response.create');
    const { conversation_id: conversationId } = await callRow(callId);
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body.outcome).toBeNull();
    caller.hangUp();
  });
});

/** What Twilio is told when a call's stream ends (the signed <Connect> action). */
async function streamEnded(callId: string): Promise<string> {
  const url = `${app.baseUrl}/telephony/twilio/${connectionId}/stream-ended?callId=${callId}`;
  const params = { CallSid: `CA${'0'.repeat(32)}`, AccountSid: twilioFake.accountSid };
  const res = await postAsTwilio(url, params, twilioFake.authToken);
  expect(res.status).toBe(200);
  return res.text();
}

describe('faults', () => {
  it('ends the call failed with the error on the record when the provider drops its socket, and keeps what was said', async () => {
    realtime.script.push({ caller: 'Are you there?', reply: [{ text: 'Yes, I am here.' }] });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= 4, 'the reply');
    session.drop();
    const closed = await caller.closed;
    expect(closed.code).toBe(1011);
    const row = await eventually(
      () => callRow(callId),
      (value) => value.status === 'failed',
      'the failed call',
    );
    expect(row.outcome).toBe('failed');
    expect(row.error_text).toMatch(/realtime provider closed the session \(code 1006\)/);
    const rest = await acme.rest.get(`/api/calls/${callId}`);
    expect(rest.body).toMatchObject({ status: 'failed', outcome: 'failed', errorText: row.error_text });
    expect((await acme.graphql.ok(StsCallDocument, { id: callId })).call).toMatchObject({ status: 'failed', outcome: 'failed', errorText: row.error_text });
    const conversation = await eventually(
      () => acme.rest.get(`/api/conversations/${row.conversation_id}`),
      (res) => res.body.status === 'failed',
      'the failed conversation',
    );
    expect(conversation.body.messageCount).toBe(2);
    // When the stream ends Twilio asks the <Connect> action what next: the caller hears an apology, then the call hangs up.
    expect(await streamEnded(callId)).toMatch(
      /<Say[^>]*>Sorry, something went wrong on our side\. We will call you back\. Goodbye\.<\/Say><Hangup\/><\/Response>$/,
    );
  });

  it('a stream that ends normally is simply hung up; the <Connect> names its action, signed like every webhook', async () => {
    const callId = await liveCall();
    expect(renderStreamTwiml({ publicUrl: app.baseUrl, connectionId, callId, nonce: 'x' })).toContain(
      `<Connect action="${app.baseUrl}/telephony/twilio/${connectionId}/stream-ended?callId=${callId}" method="POST">`,
    );
    expect(await streamEnded(callId)).toMatch(/<Response><Hangup\/><\/Response>$/);
    const url = `${app.baseUrl}/telephony/twilio/${connectionId}/stream-ended?callId=${callId}`;
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'forged' },
      body: 'CallSid=CA1',
    });
    expect(forged.status).toBe(403);
  });

  it('retries the contact per the program’s retry policy when the provider fails mid-call (a campaign through the fake Twilio)', async () => {
    let placed = 0;
    // The first call stays answered until the test has bridged it and the provider has failed (it
    // holds until `release`), however long that takes on a busy machine; the retry ends at once.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    twilioFake.script(() => ({ outcome: 'answered', ...(placed++ === 0 ? { holdUntil: held } : {}) }));
    const campaign = await voiceCampaign(acme, twilioFake, { agentId, maxAttempts: 2 });
    const runner = testRunner(app, { intervalMs: 20 });
    // Opened while Twilio fetches the answer, before the stream (issue #45).
    const next = realtime.nextSession();
    runner.start();
    try {
      // Generous waits: they end as soon as the runner gets there, and only a broken run waits them out.
      const [first] = await eventually(
        () =>
          app.sql<{ id: string; carrier_call_id: string }>(`select id, carrier_call_id from calls where execution_id = ? and status = 'in_progress'`, [
            campaign.executionId,
          ]),
        (rows) => rows.length === 1,
        'the answered first call',
      );
      // The stream Twilio was told to open when it asked the answer URL.
      const answered = await eventually(
        async () => twilioFake.calls().find((call) => call.sid === first!.carrier_call_id)?.twiml ?? null,
        Boolean,
        'the answer TwiML',
      );
      const twiml = answered!;
      const url = unescapeXml(/<Stream url="([^"]+)"/.exec(twiml)![1]!);
      const caller = await MediaStreamClient.open(url, twilioFake.authToken);
      if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
      caller.start(first!.id, first!.carrier_call_id);
      const session = await next;
      await session.waitFor('session.update');
      session.drop();
      expect((await caller.closed).code).toBe(1011);
      release(); // the carrier now ends the first call too, after the gateway has failed it
      const execution = await waitForExecution(acme, campaign.executionId, (body) => body.status === 'completed');
      expect(execution).toMatchObject({ contactsCompleted: 1, contactsFailed: 0 });
    } finally {
      release();
      await runner.stop();
    }
    await twilioFake.settled();
    const calls = await app.sql<{ attempt: number; status: string; outcome: string; error_text: string | null }>(
      'select attempt, status, outcome, error_text from calls where execution_id = ? order by attempt',
      [campaign.executionId],
    );
    // The carrier's later "completed" for the first call does not undo its failure.
    expect(calls).toEqual([
      { attempt: 1, status: 'failed', outcome: 'failed', error_text: expect.stringContaining('realtime provider closed the session') },
      { attempt: 2, status: 'completed', outcome: 'answered', error_text: null },
    ]);
  }, 120_000);

  it('ends the call failed when the provider refuses the session', async () => {
    realtime.refuseWith = 503;
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
    expect(row.error_text).toBe('The realtime provider refused the session (HTTP 503)');
  });
});

describe('who may open a media stream', () => {
  it('refuses a stream with a forged or missing signature before anything starts (403), the call unchanged', async () => {
    const callId = await liveCall();
    const { url } = await answeredWithSession(callId);
    const before = await callRow(callId);
    const sessions = realtime.sessions.length;
    expect(await MediaStreamClient.open(url, 'not-the-auth-token')).toEqual({ refused: 403 });
    expect(await MediaStreamClient.open(url, null)).toEqual({ refused: 403 });
    // Signed for another connection's URL: the signature covers the path.
    expect(await MediaStreamClient.open(url, twilioFake.authToken, url.replace(connectionId, otherConnectionId))).toEqual({ refused: 403 });
    expect(await MediaStreamClient.open(`${app.baseUrl.replace(/^http/, 'ws')}/telephony/twilio/not-a-uuid/media`, twilioFake.authToken)).toEqual({
      refused: 403,
    });
    expect(await MediaStreamClient.open(`${app.baseUrl.replace(/^http/, 'ws')}/elsewhere`, twilioFake.authToken)).toEqual({ refused: 404 });
    expect(await callRow(callId)).toEqual(before);
    expect(realtime.sessions.length).toBe(sessions);
  });

  it('closes with a policy violation a stream whose call’s agent is no longer sts, and changes nothing', async () => {
    const batchAgent = await acme.rest.post('/api/agents', {
      name: 'Batch',
      instructions: 'Be brief.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { pipelineMode: 'batch' },
    });
    expect(batchAgent.status).toBe(201);
    const callId = await liveCall();
    const { url, callSid, session } = await answeredWithSession(callId);
    await app.sql('update calls set agent_id = ? where id = ?', [batchAgent.body.id, callId]);
    const sessions = realtime.sessions.length;
    const opened = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(opened instanceof MediaStreamClient)) throw new Error('refused');
    opened.start(callId, callSid);
    await opened.sendAudio(callerSpeech(100, 0));
    expect((await opened.closed).code).toBe(1008);
    expect(opened.received).toEqual([]);
    // The session prepared for the call's agent at the answer is not the call's now: closed, and none other opened.
    await session.closed;
    expect(realtime.sessions.length).toBe(sessions);
    expect(await app.sql('select id from conversations where agent_id = ?', [batchAgent.body.id])).toEqual([]);
  });

  it('refuses (403) a stream URL naming another organization’s call, an unknown call or a made-up nonce, even when signed', async () => {
    const theirAgent = await other.rest.post('/api/agents', {
      name: 'Theirs',
      instructions: 'Hi.',
      modelConfig: { model: 'openai/gpt-realtime' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' },
    });
    expect(theirAgent.status).toBe(201);
    const theirs = await liveCall({ org: other, connection: otherConnectionId, agent: theirAgent.body.id });
    const { url: theirUrl } = await answeredWithSession(theirs);
    const mine = await liveCall();
    await answeredWithSession(mine);
    const sessions = realtime.sessions.length;
    const base = mediaUrl();
    const nonce = theirUrl.split('/').at(-1)!;
    for (const url of [
      theirUrl.replace(otherConnectionId, connectionId),
      `${base}/${randomUUID()}/${nonce}`,
      `${base}/${mine}/${'0'.repeat(43)}`,
      `${base}/not-a-uuid/x`,
      base,
    ]) {
      expect(refusedOrOpened(await MediaStreamClient.open(url, twilioFake.authToken))).toEqual({ refused: 403 });
    }
    expect(realtime.sessions.length).toBe(sessions);
    expect(await app.sql('select id from conversations where organization_id = ?', [other.organizationId])).toEqual([]);
  });
});

// Security review, item 3: one captured media-stream handshake must not open any call of the connection.
// Security review 4, L7: the media socket had no message-rate or volume limit and ignored backpressure when sending.
describe('a media stream’s limits', () => {
  it('cuts a stream that sends faster than the media rate past its burst (1008), and ends its call as a hang-up', async () => {
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    const burst = MEDIA_LIMITS.messagesPerSecond * MEDIA_LIMITS.burstSeconds;
    // Twice the burst of 20 ms frames at once, as fast as the socket takes them.
    await caller.sendAudio(callerSpeech(2 * burst * 20, 0));
    expect(await caller.closed).toEqual({ code: 1008, reason: 'over the media rate' });
    await session.closed;
    const frames = session.received.filter((event) => event.type === 'input_audio_buffer.append').length;
    // The burst, and what the rate gave back while the flood arrived; never the whole flood.
    expect(frames).toBeLessThan(2 * burst);
    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    await eventually(
      async () => (await app.sql<{ status: string }>('select status from conversations where id = ?', [conversationId]))[0]!.status,
      (status) => status === 'ended',
      'the conversation’s end',
    );
  });

  it('a stream at the media rate, a burst of frames included, is never cut', async () => {
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    // Half the burst at once (a network hiccup), then the calls' usual turn.
    await caller.sendAudio(callerSpeech((MEDIA_LIMITS.messagesPerSecond * MEDIA_LIMITS.burstSeconds * 20) / 2, 0));
    await caller.sendAudio(callerSpeech(600, 400));
    // Every frame reached the provider, so every one passed the rate; and the stream is still open.
    await session.waitFor('input_audio_buffer.append', () => session.received.filter((event) => event.type === 'input_audio_buffer.append').length >= 350);
    expect(await Promise.race([caller.closed, Promise.resolve('open')])).toBe('open');
    caller.hangUp();
  });

  it('cuts a reader that never reads once more than the bound of bytes waits unsent, and ends its call', async () => {
    realtime.script.push({ caller: 'Tell me everything.', reply: [{ text: 'word '.repeat(3000) }], paceMs: 0 });
    const callId = await liveCall();
    const { caller, session } = await openStream(callId);
    caller.stopReading();
    await caller.sendAudio(callerSpeech(600, 400));
    // The gateway gives up on the stream: the provider's session is closed, the conversation ended.
    await session.closed;
    const { conversation_id: conversationId } = await eventually(
      () => callRow(callId),
      (row) => Boolean(row.conversation_id),
      'the conversation link',
    );
    await eventually(
      async () => (await app.sql<{ status: string }>('select status from conversations where id = ?', [conversationId]))[0]!.status,
      (status) => status === 'ended',
      'the conversation’s end',
    );
    caller.resumeReading();
    expect((await caller.closed).code).toBe(1006);
    expect(session.audioSentAt.length).toBeGreaterThan(0);
  });
});

describe('a captured media-stream handshake', () => {
  it('a replay of the same URL and signature is refused (403) before any WebSocket, and the first stream keeps the call', async () => {
    realtime.script.push({ caller: 'Hello, is this the shop?', reply: [{ text: 'Yes, this is the shop.' }] });
    const callId = await liveCall();
    const { url, callSid, session } = await answeredWithSession(callId);
    const first = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(first instanceof MediaStreamClient)) throw new Error(`the first stream was refused: ${first.refused}`);
    first.start(callId, callSid);
    const sessions = realtime.sessions.length;

    expect(refusedOrOpened(await MediaStreamClient.open(url, twilioFake.authToken))).toEqual({ refused: 403 });
    expect(realtime.sessions.length).toBe(sessions);

    // The first stream still carries the call end to end.
    const speech = callerSpeech(600, 400);
    await first.sendAudio(speech);
    await first.waitFor(() => first.events('media').length >= 4, 'the agent’s reply');
    expect(session.audio().equals(speech)).toBe(true);
    first.hangUp();
    await session.closed;
  });

  it('a handshake signed for one call cannot open another call of the connection', async () => {
    const x = await liveCall();
    const y = await liveCall();
    const streamX = await answeredWithSession(x);
    const streamY = await answeredWithSession(y);
    const sessions = realtime.sessions.length;

    // X's URL and signature, with a start naming Y (its id and CallSid): closed, nothing of Y touched.
    const crossed = await MediaStreamClient.open(streamX.url, twilioFake.authToken);
    if (!(crossed instanceof MediaStreamClient)) throw new Error(`X's stream was refused: ${crossed.refused}`);
    crossed.start(y, streamY.callSid);
    await crossed.sendAudio(callerSpeech(100, 0));
    const code = await closeCode(crossed);
    crossed.hangUp();
    expect(code).toBe(1008);
    expect(crossed.received).toEqual([]);
    // Y's call id put into X's URL, under X's signature: refused before any WebSocket.
    expect(refusedOrOpened(await MediaStreamClient.open(streamX.url.replace(x, y), twilioFake.authToken, streamX.url))).toEqual({ refused: 403 });
    expect(realtime.sessions.length).toBe(sessions);
    expect((await callRow(y)).conversation_id).toBeNull();

    // Y's own stream still opens.
    const opened = await MediaStreamClient.open(streamY.url, twilioFake.authToken);
    if (!(opened instanceof MediaStreamClient)) throw new Error(`Y's own stream was refused: ${opened.refused}`);
    opened.start(y, streamY.callSid);
    await eventually(
      () => callRow(y),
      (row) => row.conversation_id !== null,
      'Y bridged',
    );
    // On the session prepared for Y at its answer: none other was opened.
    expect(realtime.sessions.length).toBe(sessions);
    opened.hangUp();
    await streamY.session.closed;
  });

  it('a repeated answer webhook gives no second stream URL that opens: the first one Twilio was given keeps the call', async () => {
    const callId = await liveCall();
    const first = await answeredWithSession(callId);
    const again = await answeredStream(callId);
    expect(again.url).not.toBe(first.url);
    expect(refusedOrOpened(await MediaStreamClient.open(again.url, twilioFake.authToken))).toEqual({ refused: 403 });
    const sessions = realtime.sessions.length;
    const opened = await MediaStreamClient.open(first.url, twilioFake.authToken);
    if (!(opened instanceof MediaStreamClient)) throw new Error(`the first URL was refused: ${opened.refused}`);
    opened.start(callId, first.callSid);
    await eventually(
      () => callRow(callId),
      (row) => row.conversation_id !== null,
      'the call bridged',
    );
    // The second answer prepared nothing: the call runs on the session prepared at the first.
    expect(realtime.sessions.length).toBe(sessions);
    opened.hangUp();
    await first.session.closed;
  });

  it('refuses (403) the stream of a call that is not in progress: still queued, or ended since its answer', async () => {
    const queued = await liveCall({ status: 'queued' });
    const { url: queuedUrl } = await answeredWithSession(queued, {});
    const ended = await liveCall();
    const { url: endedUrl } = await answeredWithSession(ended);
    await app.sql(`update calls set status = 'completed', outcome = 'answered', ended_at = now() where id = ?`, [ended]);
    const sessions = realtime.sessions.length;
    for (const url of [queuedUrl, endedUrl]) expect(refusedOrOpened(await MediaStreamClient.open(url, twilioFake.authToken))).toEqual({ refused: 403 });
    expect(realtime.sessions.length).toBe(sessions);
    expect((await callRow(queued)).status).toBe('queued');
  });

  it('closes with a policy violation a start whose callSid or callId is not the call’s', async () => {
    for (const named of ['another CallSid', 'no callId'] as const) {
      const callId = await liveCall();
      const { url, callSid } = await answeredWithSession(callId);
      const sessions = realtime.sessions.length;
      const opened = await MediaStreamClient.open(url, twilioFake.authToken);
      if (!(opened instanceof MediaStreamClient)) throw new Error(`refused: ${opened.refused}`);
      if (named === 'another CallSid') opened.start(callId, `CA${'f'.repeat(32)}`);
      else opened.start(null, callSid);
      await opened.sendAudio(callerSpeech(100, 0));
      const code = await closeCode(opened);
      opened.hangUp();
      expect(code).toBe(1008);
      expect(opened.received).toEqual([]);
      expect((await callRow(callId)).conversation_id).toBeNull();
      expect(realtime.sessions.length).toBe(sessions);
    }
  });
});

describe('the first message on a speech-to-speech call', () => {
  it('is asked for word for word with a response.create of OpenAI’s GA shape, heard first, stored first, and timed from the answer', async () => {
    const greeter = await acme.rest.post('/api/agents', {
      name: 'Greeter',
      instructions: 'You remind {{contact.name}} of their {{visit}}.',
      modelConfig: { model: 'openai/gpt-realtime' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' },
      firstMessage: 'Hello {{contact.name}}, this is {{organization.name}} about your {{visit}}.',
      variables: [{ name: 'visit', default: 'check-up' }],
    });
    expect(greeter.status).toBe(201);
    const [contact] = await app.sql<{ name: string }>('select name from contacts where id = ?', [contactId]);
    const line = `Hello ${contact!.name}, this is Acme voice about your check-up.`;
    realtime.script.push({ caller: 'Yes, that is me.', reply: [{ text: 'Great.' }] });
    const callId = await liveCall({ agent: greeter.body.id });
    const { caller, session } = await openStream(callId);

    // The session's instructions are rendered for the call, the contact's name quoted as data.
    expect(session.sessionUpdates()[0]!.session.instructions).toContain(`You remind ${JSON.stringify(contact!.name)} of their "check-up".`);
    const create = await session.waitFor('response.create');
    expect(create.response).toEqual({ instructions: expect.stringContaining(JSON.stringify(line)), tool_choice: 'none' });
    const words = line.split(' ').length;
    await caller.waitFor(() => caller.events('media').length >= words, 'the first message');
    for (const frame of caller.events('media').slice(0, words))
      expect(Math.abs(frequency(Buffer.from(String((frame.media as { payload: string }).payload), 'base64')) - FIRST_LINE_HZ)).toBeLessThan(20);

    // The caller answers once the greeting is over (stored): one who speaks over it cuts it, a case of its own.
    const row = await eventually(
      () => callRow(callId),
      (value) => Boolean(value.conversation_id),
      'the conversation link',
    );
    expect(await transcript(row.conversation_id!, 1)).toEqual([{ role: 'assistant', content: line }]);
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.waitFor(() => caller.events('media').length >= words + 1, 'the answer to the caller');
    expect(await transcript(row.conversation_id!, 3)).toEqual([
      { role: 'assistant', content: line },
      { role: 'user', content: 'Yes, that is me.' },
      { role: 'assistant', content: 'Great.' },
    ]);
    caller.stop();
    caller.hangUp();
    await session.closed;
    const latency = (
      await eventually(
        () => acme.rest.get(`/api/calls/${callId}`),
        (res) => res.body.turnLatency !== null,
        'the call’s latency',
      )
    ).body.turnLatency;
    // The call was answered 5 s before its stream opened (liveCall): the first audio came at least that long after the answer.
    expect(latency.firstAudioMs).toBeGreaterThanOrEqual(5000);
    expect(latency.firstAudioMs).toBeLessThan(60_000);
    expect(latency.turns).toHaveLength(1);
    const viaGraphql = (await acme.graphql.ok(StsCallDocument, { id: callId })).call;
    expect(viaGraphql.turnLatency?.firstAudioMs).toBe(latency.firstAudioMs);
    // The same number on the call itself, on both doors.
    expect((await acme.rest.get(`/api/calls/${callId}`)).body.firstAudioMs).toBe(latency.firstAudioMs);
    expect(viaGraphql.firstAudioMs).toBe(latency.firstAudioMs);
  });
});

describe('the session prepared while the carrier fetches the call’s instructions (issue #45)', () => {
  const LINE = 'Hello, this is Ada from the Acme shop.';
  let greeterId: string;

  beforeAll(async () => {
    const greeter = await acme.rest.post('/api/agents', {
      name: 'Ada, first',
      instructions: INSTRUCTIONS,
      modelConfig: { model: 'openai/gpt-realtime' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' },
      firstMessage: LINE,
    });
    expect(greeter.status).toBe(201);
    greeterId = greeter.body.id;
  });

  /** The carrier's final status callback for the call (the caller hung up before the stream opened). */
  async function completed(callId: string): Promise<void> {
    const [row] = await app.sql<{ carrier_call_id: string }>('select carrier_call_id from calls where id = ?', [callId]);
    const url = `${app.baseUrl}/telephony/twilio/${connectionId}/status?callId=${callId}`;
    const params = { AccountSid: twilioFake.accountSid, CallSid: row!.carrier_call_id, CallStatus: 'completed', CallDuration: '1' };
    const ended = await postAsTwilio(url, params, twilioFake.authToken);
    expect(ended.status).toBe(200);
  }

  it('is opened, configured and asked for the first message before the stream starts; its audio reaches the caller right after `start`', async () => {
    const callId = await liveCall({ agent: greeterId });
    const { url, callSid, session } = await answeredWithSession(callId);
    const create = await session.waitFor('response.create');
    expect(create.response).toEqual({ instructions: expect.stringContaining(JSON.stringify(LINE)), tool_choice: 'none' });
    const words = LINE.split(' ').length;
    // OpenAI answers a response.create with no input audio: the whole line is spoken while no stream exists.
    await eventually(
      async () => session.audioSentAt.length,
      (deltas) => deltas >= words,
      'the first message’s audio made before the stream',
    );
    const sessions = realtime.sessions.length;
    const caller = await MediaStreamClient.open(url, twilioFake.authToken);
    if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
    const startSentAt = performance.now();
    caller.start(callId, callSid);
    await caller.waitFor(() => caller.events('media').length >= words, 'the first message at the carrier');
    // Held, then sent on the start: the caller sent nothing, and the stream opened no session of its own.
    expect(session.audioSentAt.slice(0, words).every((at) => at < startSentAt)).toBe(true);
    expect(session.appendedAt).toEqual([]);
    expect(realtime.sessions.length).toBe(sessions);
    for (const frame of caller.events('media').slice(0, words))
      expect(Math.abs(frequency(Buffer.from(String((frame.media as { payload: string }).payload), 'base64')) - FIRST_LINE_HZ)).toBeLessThan(20);
    // Then the call goes on on that session: the caller's audio reaches it, the answer comes back.
    realtime.script.push({ caller: 'Is the shop open?', reply: [{ text: 'Yes, until six.' }] });
    const speech = callerSpeech(600, 400);
    await caller.sendAudio(speech);
    await caller.waitFor(() => caller.events('media').length >= words + 3, 'the answer');
    expect(session.audio().equals(speech)).toBe(true);
    const row = await callRow(callId);
    expect(await transcript(row.conversation_id!, 3)).toEqual([
      { role: 'assistant', content: LINE },
      { role: 'user', content: 'Is the shop open?' },
      { role: 'assistant', content: 'Yes, until six.' },
    ]);
    caller.stop();
    caller.hangUp();
    await session.closed;
    const call = await eventually(
      () => acme.rest.get(`/api/calls/${callId}`),
      (res) => res.body.firstAudioMs !== null,
      'the first audio recorded',
    );
    // Timed from the answer (5 s before the webhook, liveCall) to the first audio written to the carrier.
    expect(call.body.firstAudioMs).toBeGreaterThanOrEqual(5000);
    expect((await other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
  });

  it('closes the prepared session on the call’s final status callback when its stream never came', async () => {
    const callId = await liveCall({ agent: greeterId });
    const { session } = await answeredWithSession(callId);
    await session.waitFor('response.create');
    await completed(callId);
    // Closed by the gateway on the callback, before the preparation's own lifetime (PREPARED_FOR_MS) could have.
    const closedBy = await Promise.race([
      session.closed.then(() => 'closed' as const),
      new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), PREPARED_FOR_MS - 5000)),
    ]);
    expect(closedBy).toBe('closed');
    expect((await callRow(callId)).conversation_id).toBeNull();
  });

  it('a provider that fails during the preparation (refused, or dropped before the stream) still gives a call that speaks: its stream opens its own session', async () => {
    // Refused at the answer, then reachable again.
    realtime.refuseWith = 503;
    const refusals = realtime.refused;
    const refused = await liveCall({ agent: greeterId });
    const first = await answeredStream(refused);
    await eventually(
      async () => realtime.refused,
      (count) => count > refusals,
      'the prepared session refused',
    );
    realtime.refuseWith = null;
    // Opened and configured at the answer, then dropped by the provider before the stream.
    const dropped = await liveCall({ agent: greeterId });
    const second = await answeredWithSession(dropped);
    await second.session.waitFor('response.create');
    second.session.drop();
    await second.session.closed;
    for (const [callId, { url, callSid }] of [
      [refused, first],
      [dropped, second],
    ] as const) {
      const caller = await MediaStreamClient.open(url, twilioFake.authToken);
      if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
      const next = realtime.nextSession();
      caller.start(callId, callSid);
      const own = await next;
      await own.waitFor('response.create');
      await caller.waitFor(() => caller.events('media').length >= LINE.split(' ').length, 'the first message');
      const row = await callRow(callId);
      expect(row.status).toBe('in_progress');
      expect(await transcript(row.conversation_id!, 1)).toEqual([{ role: 'assistant', content: LINE }]);
      caller.hangUp();
      await own.closed;
    }
  });

  it('is held no longer than its lifetime, and no more calls are prepared at once than the bound', async () => {
    const { database } = app.db;
    const preparations = new StreamPreparations({
      em: database.em,
      conversations: new CallConversations(database.em),
      recognizers: {},
      synthesizers: {},
      speech: {
        conversations: new CallConversations(database.em),
        speech: { openai: new OpenAiSpeechProvider({ url: realtime.url, apiKey: 'sk-test-realtime-key' }) },
        knowledge: app.gateway.services.agentPorts.knowledge,
        withContext: (work) => work(),
        logger: createLogger('silent'),
      },
      logger: createLogger('silent'),
      preparedForMs: 200,
      maxPrepared: 1,
    });
    const firstCall = await liveCall({ agent: greeterId });
    const secondCall = await liveCall({ agent: greeterId });
    const sessions = realtime.sessions.length;
    const next = realtime.nextSession();
    preparations.prepare(firstCall);
    preparations.prepare(secondCall);
    expect(preparations.size).toBe(1);
    const session = await next;
    // Not taken within its lifetime: closed by the gateway.
    await session.closed;
    expect(preparations.size).toBe(0);
    expect(preparations.takeSpeech(firstCall)).toBeNull();
    expect(preparations.takeSpeech(secondCall)).toBeNull();
    expect(realtime.sessions.length).toBe(sessions + 1);
  });
});
