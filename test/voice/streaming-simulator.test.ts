import { CreateStreamingAgentDocument, StreamingCallDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { messagesOf } from './fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { BARGE_IN_AFTER_MS } from '../../src/modules/voice/streaming/simulated-stream.js';
import { builtinVoice, CALLER_VOICE } from '../../src/modules/voice/streaming/espeak-voices.js';
import { download, readWav, says } from '../recordings/fixtures.js';
import { testRunner } from '../runner/fixtures.js';

// The streaming pipeline offline: a campaign on the simulator whose agent's pipelineMode is
// streaming, with no provider account. The simulated caller speaks its lines as builtin code over a
// simulated media stream; the agent hears them through the builtin recognizer, answers through its
// model (builtin/echo) streamed sentence by sentence to the builtin synthesizer (eSpeak NG's speech),
// and the caller hears the answer by the words sent beside its audio. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const POLICY = 'Never offer a discount above ten percent to anyone.';
const SHORT = 'Hello, who is calling?';
// Echoed, this is longer than the simulated caller's patience: it speaks its next line over it.
const LONG = 'Could you tell me everything about the opening hours of the shop on weekdays and at weekends, please?';
const LAST = 'Thank you, goodbye.';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme streaming');
  other = await app.organization('Other streaming');
});
afterAll(() => app.close());

async function streamingAgent(org: TestOrganization, voiceConfig: Record<string, unknown> = {}): Promise<string> {
  const res = await org.rest.post('/api/agents', {
    name: 'Ada',
    instructions: 'You answer callers of the Acme shop.',
    policy: POLICY,
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', ...voiceConfig },
  });
  expect(res.status).toBe(201);
  expect((await org.rest.post(`/api/agents/${res.body.id}/activate`)).status).toBe(200);
  return res.body.id as string;
}

async function offlineCampaign(agentId: string, utterances: string[], contacts: number, settings: Record<string, unknown> = {}) {
  const audience = await createAudience(acme, contacts);
  const program = await acme.rest.post('/api/programs', {
    name: 'Streaming offline',
    kind: 'campaign',
    agentId,
    audienceId: audience.id,
    maxConcurrentCalls: contacts,
    simulatedCaller: { utterances },
    ...settings,
  });
  expect(program.status).toBe(201);
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
  const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
  expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
  const dialer = new SimulatedDialer({ seed: 'streaming', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } });
  const services = app.gateway.services;
  const runner = testRunner(app, { dialer, logger: createLogger('silent'), intervalMs: 10, conversations: services.conversations });
  runner.start();
  try {
    await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
  } finally {
    await runner.stop();
  }
  return app.sql<{ id: string; status: string; conversation_id: string | null }>('select id, status, conversation_id from calls where execution_id = ?', [
    execution.id,
  ]);
}

describe('voiceConfig of a streaming agent', () => {
  it('stores the default recognizer and synthesizer, the same on both doors, and refuses a bad language the same way', async () => {
    const rest = await acme.rest.post('/api/agents', {
      name: 'Defaults',
      instructions: 'Hi.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { pipelineMode: 'streaming' },
    });
    expect(rest.status).toBe(201);
    const expected = {
      pipelineMode: 'streaming',
      voiceId: null,
      stsProvider: null,
      sttProvider: 'deepgram',
      sttModel: null,
      ttsProvider: 'elevenlabs',
      ttsModel: null,
      language: null,
    };
    // REST answers every field of the type: the turn-taking settings too, null when unset (interruptions.test.ts).
    expect(rest.body.voiceConfig).toEqual({ ...expected, interruptions: null, turnDetection: null });
    const graphql = await acme.graphql.ok(CreateStreamingAgentDocument, {
      input: { name: 'Defaults', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' }, voiceConfig: { pipelineMode: 'streaming' } },
    });
    expect(graphql.createAgent.voiceConfig).toEqual(expected);

    const bad = { pipelineMode: 'streaming', language: 'English please' };
    const refused = await acme.rest.post('/api/agents', { name: 'Bad', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' }, voiceConfig: bad });
    expect(refused.status).toBe(400);
    const message = JSON.stringify(refused.body);
    expect(message).toContain('language must be a BCP-47 tag');
    const viaGraphql = await acme.graphql.run(CreateStreamingAgentDocument, {
      input: {
        name: 'Bad',
        instructions: 'Hi.',
        modelConfig: { model: 'builtin/echo' },
        voiceConfig: { pipelineMode: 'streaming', language: 'English please' },
      },
    });
    expect(viaGraphql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(viaGraphql.errors)).toContain('language must be a BCP-47 tag');
  });
});

describe('an offline streaming campaign', () => {
  it('talks every call through the pipeline: both sides’ words stored, a barge-in cut where it was heard, turn latencies on both doors', async () => {
    // The agent speaks (eSpeak NG): the long echo lasts longer than the caller waits before speaking over it.
    expect((await builtinVoice().speak(`Echo: ${LONG}`)).ulaw.length / 8).toBeGreaterThan(BARGE_IN_AFTER_MS);
    const agentId = await streamingAgent(acme);
    const calls = await offlineCampaign(agentId, [SHORT, LONG, LAST], 2, { recording: { enabled: true, channels: 'dual' } });
    expect(calls).toHaveLength(2);
    const firstAudio = new Map<string, number>();
    // Both calls ran at once through the one builtin voice: after their greetings (which name the contact), word for word the same, the cut included.
    const [one, two] = await Promise.all(
      calls.map(async (call) => (await messagesOf(app, call.conversation_id!)).slice(1).map((message) => `${message.role}: ${message.content}`)),
    );
    expect(one).toEqual(two);
    for (const call of calls) {
      expect(call.status).toBe('completed');
      const messages = (await messagesOf(app, call.conversation_id!)).map((message) => `${message.role}: ${message.content}`);
      // The default first message of an outbound call names the contact and the organization.
      expect(messages[0]).toMatch(/^assistant: Hello Person \d+, this is Ada calling from Acme[^.]*\.$/);
      expect(messages.slice(1, 3)).toEqual([`user: ${SHORT}`, `assistant: Echo: ${SHORT}`]);
      expect(messages[3]).toBe(`user: ${LONG}`);
      // The long answer was cut where the caller spoke over it: what was heard of it, and no more.
      const cut = messages[4]!.replace(/^assistant: /, '');
      expect(`Echo: ${LONG}`.startsWith(cut)).toBe(true);
      expect(cut.length).toBeGreaterThan(10);
      expect(cut.length).toBeLessThan(`Echo: ${LONG}`.length);
      expect(messages.slice(5)).toEqual([`user: ${LAST}`, `assistant: Echo: ${LAST}`]);
      expect((await acme.rest.get(`/api/conversations/${call.conversation_id}`)).body).toMatchObject({ status: 'ended', callId: call.id });

      // Its recording is speech: the agent's greeting as the caller heard it (the words beside the audio), and the caller's first line in its own voice.
      const audio = await download(app.baseUrl, `/api/calls/${call.id}/recording`, { 'x-api-key': acme.apiKey });
      const [callee, gateway] = readWav(audio.body).samples as [Int16Array, Int16Array];
      const greeting = await says(gateway, messages[0]!.replace(/^assistant: /, ''));
      expect([greeting.speech, greeting.sameLength, greeting.correlation > 0.9]).toEqual([true, true, true]);
      const answer = await says(callee, SHORT, CALLER_VOICE);
      expect([answer.speech, answer.sameLength, answer.correlation > 0.9]).toEqual([true, true, true]);

      const latency = (await acme.rest.get(`/api/calls/${call.id}`)).body.turnLatency;
      expect(latency).toMatchObject({ provider: 'builtin+builtin', bargeIns: 1 });
      expect(latency.turns).toHaveLength(3);
      for (const turn of latency.turns) {
        expect(turn.totalMs).toBeGreaterThan(0);
        expect(turn.totalMs).toBeCloseTo(turn.recognizerMs + turn.modelMs + turn.synthesizerMs + turn.waitMs + turn.gatewayMs, 1);
        expect(turn.providerMs).toBeCloseTo(turn.recognizerMs + turn.modelMs + turn.synthesizerMs, 1);
      }
      const viaGraphql = (await acme.graphql.ok(StreamingCallDocument, { id: call.id })).call;
      expect(viaGraphql.turnLatency).toEqual(latency);
      // The answer → first audio time, on the call itself on both doors and in the CSV.
      expect(typeof latency.firstAudioMs).toBe('number');
      expect((await acme.rest.get(`/api/calls/${call.id}`)).body.firstAudioMs).toBe(latency.firstAudioMs);
      expect(viaGraphql.firstAudioMs).toBe(latency.firstAudioMs);
      firstAudio.set(call.id, latency.firstAudioMs);
      expect((await other.rest.get(`/api/calls/${call.id}`)).status).toBe(404);
      expect((await other.graphql.run(StreamingCallDocument, { id: call.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const [execution] = await app.sql<{ execution_id: string }>('select execution_id from calls where id = ?', [calls[0]!.id]);
    const csv = await fetch(`${app.baseUrl}/api/executions/${execution!.execution_id}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
    const [header, ...rows] = (await csv.text()).trim().split('\r\n');
    const columns = header!.split(',');
    expect(columns).toContain('firstAudioMs');
    for (const line of rows) {
      const cells = line.split(',');
      const callId = cells[columns.indexOf('lastCallId')]!;
      expect(Number(cells[columns.indexOf('firstAudioMs')])).toBe(firstAudio.get(callId));
    }
  });

  it('passes keys to the agent as one keypad line, and speaks back the caller’s own words, a policy sentence among them, unjudged', async () => {
    const agentId = await streamingAgent(acme);
    const [call] = await offlineCampaign(agentId, ['42', POLICY, LAST], 1);
    expect(call!.status).toBe('completed');
    const messages = (await messagesOf(app, call!.conversation_id!)).map((message) => `${message.role}: ${message.content}`);
    expect(messages.slice(1, 3)).toEqual(['user: [the caller pressed 42#]', 'assistant: Echo: [the caller pressed 42#]']);
    // builtin/echo repeats what the caller said: their words are theirs, so the guard lets them through (a cut would tell them they guessed it).
    expect(messages.slice(3, 5)).toEqual([`user: ${POLICY}`, `assistant: Echo: ${POLICY}`]);
    expect(messages.slice(-2)).toEqual([`user: ${LAST}`, `assistant: Echo: ${LAST}`]);
  });
});
