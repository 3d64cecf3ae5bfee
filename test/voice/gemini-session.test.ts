import { eventually } from '../helpers/eventually.js';
import type { Agent } from '../../src/modules/agents/agent.entity.js';
import { GeminiSpeechProvider } from '../../src/modules/voice/realtime/gemini-live.js';
import type { SpeechEvents, SpeechSession } from '../../src/modules/voice/realtime/speech-provider.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';

// The Gemini Live session against its double, without a call around it (no database): what it does
// at the connection's documented time limit (Google's session-management page: "The lifetime of a
// connection is limited to around 10 minutes"; a close without goAway there is the limit, resumed
// with the last handle), and how new instructions reach the model mid-session (`contextUpdate` for
// Gemini 3.8 Live's models, a session resumed with them for the other 3.x models, which take
// clientContent only to seed the history, and a `clientContent` turn for older ones).

const KEY = 'gemini-session-key';
let gemini: FakeGeminiLive;

beforeAll(async () => {
  gemini = await startFakeGeminiLive(KEY);
});

afterAll(async () => {
  await gemini?.close();
});

beforeEach(() => {
  gemini.problems.length = 0;
});

afterEach(() => {
  expect(gemini.problems).toEqual([]);
});

const agent = (model: string) =>
  ({ modelConfig: { model }, voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' }, resolutionCriteria: [] }) as unknown as Agent;

function recorder() {
  const lost: string[] = [];
  const events: SpeechEvents = {
    callerStarted: () => undefined,
    callerStopped: () => undefined,
    interrupted: () => undefined,
    callerTurn: () => undefined,
    replyStarted: () => undefined,
    agentAudio: () => undefined,
    agentWords: () => undefined,
    agentItemDone: () => undefined,
    replyDone: () => undefined,
    toolCall: () => undefined,
    providerError: () => undefined,
  };
  return { events, lost };
}

async function open(provider: GeminiSpeechProvider, model: string): Promise<{ session: SpeechSession; lost: string[] }> {
  const { events, lost } = recorder();
  const first = gemini.nextSession();
  const session = await provider.open(agent(model), 'You are Ada.', events);
  session.onLost((reason) => lost.push(reason));
  await (await first).waitFor('setup');
  return { session, lost };
}

describe('a Gemini Live session at its connection’s time limit', () => {
  it('resumes with the last handle when the service closes the connection at its lifetime without goAway', async () => {
    const provider = new GeminiSpeechProvider({ apiKey: KEY, baseUrl: gemini.baseUrl, connectionLifetimeMs: 0 });
    const { session, lost } = await open(provider, 'google/gemini-3.8-live');
    const expiring = gemini.sessions.at(-1)!;
    const next = gemini.nextSession();
    expiring.expire();
    const resumed = await next;
    await resumed.waitFor('setup');
    expect(resumed.resumedFrom).toMatch(/^handle-/);
    // The caller's audio goes to the resumed session.
    session.appendCallerAudio(Buffer.alloc(160, 0xff).toString('base64'));
    await resumed.waitFor('realtimeInput');
    expect(lost).toEqual([]);
    session.close();
  });

  it('ends the session with its reason when a connection closes before its lifetime (a real loss)', async () => {
    const provider = new GeminiSpeechProvider({ apiKey: KEY, baseUrl: gemini.baseUrl, connectionLifetimeMs: 60 * 60_000 });
    const { session, lost } = await open(provider, 'google/gemini-3.8-live');
    const sessions = gemini.sessions.length;
    gemini.sessions.at(-1)!.expire();
    await eventually(
      () => lost.length,
      (n) => n > 0,
      { what: 'the session lost' },
    );
    expect(lost).toEqual(['The realtime provider closed the session (code 1011: Deadline expired before operation could complete.)']);
    expect(gemini.sessions.length).toBe(sessions);
    session.close();
  });
});

describe('new instructions mid-session', () => {
  it('reach Gemini 3.8 Live as contextUpdate, replacing the system instruction', async () => {
    const provider = new GeminiSpeechProvider({ apiKey: KEY, baseUrl: gemini.baseUrl });
    const { session } = await open(provider, 'google/gemini-3.8-live');
    session.updateInstructions('You are Ada. Passages: the shop opens at nine.');
    const update = await gemini.sessions.at(-1)!.waitFor('contextUpdate');
    expect(update.contextUpdate).toEqual({ systemInstruction: { parts: [{ text: 'You are Ada. Passages: the shop opens at nine.' }], role: 'user' } });
    session.close();
  });

  it('reach Gemini 3.1 Flash Live, which takes clientContent only to seed its history, as a session resumed with them', async () => {
    const provider = new GeminiSpeechProvider({ apiKey: KEY, baseUrl: gemini.baseUrl });
    const { session, lost } = await open(provider, 'google/gemini-3.1-flash-live-preview');
    const next = gemini.nextSession();
    session.updateInstructions('You are Ada. Passages: the shop opens at nine.');
    const resumed = await next;
    const setup = await resumed.waitFor('setup');
    expect(resumed.resumedFrom).toMatch(/^handle-/);
    expect(JSON.stringify(setup.setup.systemInstruction)).toContain('Passages: the shop opens at nine.');
    // Nothing was sent that the model refuses mid-session (the afterEach checks the double's problems).
    session.appendCallerAudio(Buffer.alloc(160, 0xff).toString('base64'));
    await resumed.waitFor('realtimeInput');
    expect(lost).toEqual([]);
    session.close();
  });

  it('reach an older Live model, which takes no contextUpdate, as context that asks for no reply', async () => {
    const provider = new GeminiSpeechProvider({ apiKey: KEY, baseUrl: gemini.baseUrl });
    const { session } = await open(provider, 'google/gemini-2.5-flash-native-audio-preview-12-2025');
    session.updateInstructions('You are Ada. Passages: the shop opens at nine.');
    const content = await gemini.sessions.at(-1)!.waitFor('clientContent');
    expect(content.clientContent.turnComplete).toBe(false);
    expect(content.clientContent.turns[0].parts[0].text).toContain('Passages: the shop opens at nine.');
    session.close();
  });
});
