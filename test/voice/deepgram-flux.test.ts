import { CreateTurnTakingAgentDocument, TurnTakingAgentDocument } from '../generated/graphql.js';
import { graphqlCode, graphqlFields, restFields } from '../agents/fixtures.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeDeepgram, type FakeDeepgram, type FakeDeepgramSession } from '../support/fake-deepgram.js';
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

const base = { name: 'Flux agent', instructions: 'You answer callers of the Acme shop.', modelConfig: { model: 'builtin/echo' } };
const streaming = { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' };

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  app = await startTwilioApp(twilioFake, undefined, {
    providers: { deepgramApiKey: DEEPGRAM_KEY, deepgramBaseUrl: deepgram.baseUrl, elevenlabsApiKey: ELEVENLABS_KEY, elevenlabsBaseUrl: elevenlabs.baseUrl },
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
});

beforeEach(() => {
  deepgram.clearScript();
  elevenlabs.reset();
});

afterEach(() => {
  // The double checked the handshake and every message against the channel Deepgram publishes.
  expect(deepgram.problems).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
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
    expect(Object.fromEntries(session.query)).toEqual({ model: 'flux-general-en', encoding: 'mulaw', sample_rate: '8000', eot_threshold: '0.6' });
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
