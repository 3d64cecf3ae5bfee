import WebSocket from 'ws';
import { LIVE_PATH, shapeProblem, startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';

// The Gemini Live double refuses what the service refuses: a test that passes against it could
// not pass by sending what Google would close the session for.

let gemini: FakeGeminiLive;

beforeAll(async () => {
  gemini = await startFakeGeminiLive('the-key');
});
afterAll(() => gemini.close());
beforeEach(() => {
  gemini.problems.length = 0;
});

const SETUP = { setup: { model: 'models/gemini-3.8-live', generationConfig: { responseModalities: ['AUDIO'] }, inputAudioTranscription: {} } };

/** Opens a socket as the SDK does, sends the messages, and resolves with how the double closed it (or 'open' after 300 ms) and what it sent. */
async function exchange(
  messages: unknown[],
  key = 'the-key',
  path = `/${LIVE_PATH}`,
): Promise<{ close: { code: number; reason: string } | 'open'; received: Record<string, unknown>[] }> {
  const socket = new WebSocket(`${gemini.baseUrl.replace(/^http/, 'ws')}${path}?key=${key}`);
  const received: Record<string, unknown>[] = [];
  socket.on('message', (data) => received.push(JSON.parse(data.toString())));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  for (const message of messages) socket.send(JSON.stringify(message));
  const close = await Promise.race([closed, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 300))]);
  socket.terminate();
  return { close, received };
}

describe('the Gemini Live double', () => {
  it('answers a valid setup with setupComplete and keeps the session open', async () => {
    const { close, received } = await exchange([
      SETUP,
      { realtimeInput: { audio: { data: Buffer.alloc(640).toString('base64'), mimeType: 'audio/pcm;rate=16000' } } },
    ]);
    expect(close).toBe('open');
    expect(received).toEqual([{ setupComplete: {} }]);
    expect(gemini.problems).toEqual([]);
  });

  it.each([
    ['an unknown field of setup', [{ setup: { ...SETUP.setup, voice: 'Kore' } }], 1007, /Unknown name "voice" at 'setup'/],
    ['a field of the wrong type', [{ setup: { ...SETUP.setup, inputAudioTranscription: true } }], 1007, /Invalid value at 'setup.inputAudioTranscription'/],
    ['a message before setup', [{ realtimeInput: { audioStreamEnd: true } }], 1007, /first message must be setup/],
    ['two kinds in one message', [{ ...SETUP, realtimeInput: { audioStreamEnd: true } }], 1007, /one of setup/],
    ['an unknown model', [{ setup: { ...SETUP.setup, model: 'models/gpt-realtime' } }], 1008, /not found for API version v1beta/],
    ['a text modality on a native audio model', [{ setup: { ...SETUP.setup, generationConfig: { responseModalities: ['TEXT'] } } }], 1007, /AUDIO only/],
    [
      'a thinking config on 3.8 Live',
      [{ setup: { ...SETUP.setup, generationConfig: { responseModalities: ['AUDIO'], thinkingConfig: { thinkingLevel: 'low' } } } }],
      1007,
      /takes no thinking config/,
    ],
    ['audio at another rate', [SETUP, { realtimeInput: { audio: { data: 'AAAA', mimeType: 'audio/pcm;rate=8000' } } }], 1007, /audio\/pcm;rate=16000/],
    [
      'a tool response to no call',
      [SETUP, { toolResponse: { functionResponses: [{ id: 'call-1', name: 'end_call', response: {} }] } }],
      1007,
      /no function call with id call-1/,
    ],
    ['an unknown resumption handle', [{ setup: { ...SETUP.setup, sessionResumption: { handle: 'made-up' } } }], 1008, /handle is not valid/],
    [
      'clientContent to a 3.x Live model that did not ask to seed its history',
      [SETUP, { clientContent: { turns: [{ role: 'user', parts: [{ text: 'Say hello' }] }], turnComplete: true } }],
      1007,
      /only accepted to seed the initial history/,
    ],
  ] as const)('closes the session on %s', async (_name, messages, code, reason) => {
    const { close } = await exchange([...messages]);
    expect(close).toMatchObject({ code, reason: expect.stringMatching(reason) });
    expect(gemini.problems).toHaveLength(1);
  });

  it('answers realtime text that quotes a line with exactly that line, spoken and transcribed', async () => {
    const { close, received } = await exchange([
      SETUP,
      { realtimeInput: { text: `Open the call now: say exactly the words of this JSON string: ${JSON.stringify('Hello Ada, this is Riley.')}` } },
    ]);
    expect(close).toBe('open');
    const words = received.flatMap(
      (message) => (message.serverContent as { outputTranscription?: { text: string } } | undefined)?.outputTranscription?.text ?? [],
    );
    expect(words.join('')).toBe('Hello Ada, this is Riley.');
    expect(received.some((message) => (message.serverContent as { turnComplete?: boolean } | undefined)?.turnComplete)).toBe(true);
    expect(gemini.problems).toEqual([]);
  });

  it('closes with 1008 a session whose key is not the one it was given', async () => {
    const { close } = await exchange([SETUP], 'another-key');
    expect(close).toEqual({ code: 1008, reason: 'API key not valid. Please pass a valid API key.' });
  });

  it('reads the allowed fields from the SDK’s types: nested unknown fields are named with their path', () => {
    expect(shapeProblem({ a: { b: 1 } }, { a: { c: 'number' } }, 'setup')).toBe(
      `Invalid JSON payload received. Unknown name "b" at 'setup.a': Cannot find field.`,
    );
    expect(shapeProblem({ list: [{ x: 'y' }] }, { list: { of: { x: 'number' } } }, '')).toMatch(/Invalid value at 'list\[0\].x' \(TYPE_NUMBER\)/);
  });
});
