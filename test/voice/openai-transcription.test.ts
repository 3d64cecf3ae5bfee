import WebSocket from 'ws';
import { OpenAiRecognizer, transcriptionConfig, TURN_SILENCE_MS } from '../../src/modules/voice/streaming/openai-transcription.js';
import type { RecognizerEvents, RecognizerSession } from '../../src/modules/voice/streaming/speech-ports.js';
import { tone } from '../support/fake-openai-realtime.js';
import { startFakeTranscription, TRANSCRIPTION_TEST_KEY, type FakeTranscription } from '../support/fake-openai-transcription.js';
import { clientEventProblem } from '../support/openai-realtime-spec.js';

// The OpenAI recognizer against its loopback double: a GA Realtime transcription session
// (`?intent=transcription`, a `session.update` of type `transcription`, checked against the vendored
// GA schemas), the caller's μ-law appended as it is, each turn told as speechStarted, interims and
// one final with where the caller's words ended; refusals and broken sockets in OpenAI's words
// without the key. Waits are for events, never for a time.

let fake: FakeTranscription;

beforeAll(async () => {
  fake = await startFakeTranscription();
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.problems.length = 0;
  fake.script.length = 0;
  fake.handshakes.length = 0;
  fake.apiKey = TRANSCRIPTION_TEST_KEY;
  fake.refuseWith = null;
  fake.confirmsUpdates = true;
});

afterEach(() => {
  expect(fake.problems).toEqual([]);
});

const FRAME_MS = 20;
/** 20 ms of μ-law silence (0xFF is zero in μ-law). */
const SILENCE = Buffer.alloc(160, 0xff);

/** Everything a session told, in order, and a way to wait for a moment in it. */
function listener() {
  const told: string[] = [];
  const finals: { text: string; endOfTurn: boolean; audioEndMs?: number }[] = [];
  const events: RecognizerEvents = {
    speechStarted: () => told.push('speechStarted'),
    interim: (text) => told.push(`interim: ${text}`),
    final: (text, endOfTurn, audioEndMs) => {
      finals.push({ text, endOfTurn, ...(audioEndMs === undefined ? {} : { audioEndMs }) });
      told.push(`final: ${text}`);
    },
    utteranceEnd: (audioEndMs) => told.push(`utteranceEnd: ${audioEndMs}`),
    lost: (reason) => told.push(`lost: ${reason}`),
  };
  const until = async (test: (told: string[]) => boolean, what: string) => {
    for (let waited = 0; !test(told); waited += 10) {
      if (waited > 5000) throw new Error(`no ${what}; told: ${JSON.stringify(told)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { events, told, finals, until };
}

/** `null`: no key configured. */
function recognizer(apiKey: string | null = TRANSCRIPTION_TEST_KEY, timeoutMs?: number) {
  return new OpenAiRecognizer({ ...(apiKey === null ? {} : { apiKey }), url: fake.url, ...(timeoutMs ? { timeoutMs } : {}) });
}

/** The caller speaks `speechMs` of a tone, then is silent `silenceMs`, in 20 ms frames as Twilio sends them. */
function speak(session: RecognizerSession, speechMs: number, silenceMs: number): void {
  const speech = tone(300, speechMs);
  for (let offset = 0; offset < speech.length; offset += 160) session.send(speech.subarray(offset, offset + 160));
  for (let ms = 0; ms < silenceMs; ms += FRAME_MS) session.send(SILENCE);
}

describe('the transcription session the recognizer sets', () => {
  it('is a GA transcription session.update as OpenAI publishes it, μ-law as it is, the language as ISO-639-1', () => {
    const session = transcriptionConfig({ model: '', language: 'en-US', keyterms: ['Acme', 'refund'] });
    expect(session).toEqual({
      type: 'transcription',
      audio: {
        input: {
          format: { type: 'audio/pcmu' },
          transcription: { model: 'gpt-live-transcribe', language: 'en', keywords: ['Acme', 'refund'] },
          turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: TURN_SILENCE_MS },
          noise_reduction: { type: 'near_field' },
        },
      },
    });
    expect(clientEventProblem({ type: 'session.update', session })).toBeNull();
    expect(transcriptionConfig({ model: 'gpt-live-transcribe', language: 'fr', keyterms: ['Acme'] }).audio.input.transcription).toEqual({
      model: 'gpt-live-transcribe',
      language: 'fr',
      keywords: ['Acme'],
    });
    expect(transcriptionConfig({ model: 'gpt-4o-mini-transcribe', language: 'de' }).audio.input.transcription).toEqual({
      model: 'gpt-4o-mini-transcribe',
      language: 'de',
    });
    expect(transcriptionConfig({ model: 'gpt-4o-transcribe', language: 'en', keyterms: ['Acme'] }).audio.input.transcription).toEqual({
      model: 'gpt-4o-transcribe',
      language: 'en',
      prompt: 'The caller may say: Acme.',
    });
    // gpt-realtime-whisper takes no VAD: OpenAI's schema says its turn_detection "must be null".
    const whisper = transcriptionConfig({ model: 'gpt-realtime-whisper', language: 'en' });
    expect(whisper.audio.input.turn_detection).toBeNull();
    expect(clientEventProblem({ type: 'session.update', session: whisper })).toBeNull();
    // The double's schemas refuse what the service refuses: a model at the session's top, the beta names.
    expect(clientEventProblem({ type: 'session.update', session: { ...session, model: 'gpt-4o-transcribe' } })).toMatchObject({
      code: 'unknown_parameter',
      param: 'session.model',
    });
    expect(clientEventProblem({ type: 'session.update', session: { ...session, input_audio_format: 'g711_ulaw' } })).toMatchObject({
      code: 'unknown_parameter',
    });
  });
});

describe('the transcription double', () => {
  it('refuses a transcription update on a socket opened without the transcription intent', async () => {
    const socket = new WebSocket(`${fake.url}?model=gpt-realtime`, { headers: { Authorization: `Bearer ${TRANSCRIPTION_TEST_KEY}` } });
    const events: { type: string; error?: { message: string } }[] = [];
    socket.on('message', (data) => events.push(JSON.parse(data.toString())));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'session.update', session: transcriptionConfig({ model: '', language: 'en' }) }));
    for (let waited = 0; !events.some((event) => event.type === 'error') && waited < 5000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events.find((event) => event.type === 'error')?.error?.message).toBe(
      'Passing a transcription session update event to a realtime session is not allowed.',
    );
    socket.close();
    fake.problems.length = 0;
  });
});

describe('OpenAiRecognizer', () => {
  it('says what it misses without a key', async () => {
    expect(recognizer(null).missing()).toBe('OPENAI_API_KEY is not set');
    expect(recognizer().missing()).toBeNull();
    expect(recognizer().defaultModel).toBe('gpt-live-transcribe');
    await expect(recognizer(null).open({ model: '', language: 'en' }, listener().events)).rejects.toThrow('OPENAI_API_KEY is not set');
  });

  it('opens a transcription session and tells each turn: speech started, interims as they grow, one final where the words ended', async () => {
    const heard = listener();
    fake.script.push({ caller: 'Hello there, I need help.' }, { caller: 'My order number is five.' });
    const opened = fake.nextSession();
    const session = await recognizer().open({ model: 'gpt-4o-mini-transcribe', language: 'en-GB' }, heard.events);
    const double = await opened;

    expect(fake.handshakes).toEqual(['/v1/realtime?intent=transcription']);
    expect(double.headers.authorization).toBe(`Bearer ${TRANSCRIPTION_TEST_KEY}`);
    expect(double.kind).toBe('transcription');
    expect(double.sessionUpdates()).toHaveLength(1);
    expect(double.config.audio.input).toMatchObject({
      format: { type: 'audio/pcmu' },
      transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' },
      turn_detection: { silence_duration_ms: TURN_SILENCE_MS },
    });

    speak(session, 600, TURN_SILENCE_MS + 100);
    await heard.until((told) => told.includes('final: Hello there, I need help.'), 'first final');
    speak(session, 800, TURN_SILENCE_MS + 100);
    await heard.until((told) => told.includes('final: My order number is five.'), 'second final');

    expect(heard.told).toEqual([
      'speechStarted',
      'interim: Hello',
      'interim: Hello there,',
      'interim: Hello there, I',
      'interim: Hello there, I need',
      'interim: Hello there, I need help.',
      'final: Hello there, I need help.',
      'speechStarted',
      'interim: My',
      'interim: My order',
      'interim: My order number',
      'interim: My order number is',
      'interim: My order number is five.',
      'final: My order number is five.',
    ]);
    // The service's audio_end_ms includes the silence that ended the turn; the final tells where the words ended.
    const firstEnd = 600;
    const secondEnd = firstEnd + TURN_SILENCE_MS + 100 + 800;
    expect(heard.finals).toEqual([
      { text: 'Hello there, I need help.', endOfTurn: true, audioEndMs: firstEnd },
      { text: 'My order number is five.', endOfTurn: true, audioEndMs: secondEnd },
    ]);
    // The audio went as Twilio sent it: μ-law, untouched.
    expect(
      Buffer.concat(double.audioChunks).equals(Buffer.concat([tone(300, 600), Buffer.alloc(160 * 25, 0xff), tone(300, 800), Buffer.alloc(160 * 25, 0xff)])),
    ).toBe(true);
    session.close();
    await double.closed;
    expect(heard.told.some((event) => event.startsWith('lost'))).toBe(false);
  });

  it('finds the turns itself for gpt-realtime-whisper (turn_detection null) and commits each one', async () => {
    const heard = listener();
    fake.script.push({ caller: 'Hello there.' }, { caller: 'Goodbye.' });
    const opened = fake.nextSession();
    const session = await recognizer().open({ model: 'gpt-realtime-whisper', language: 'en' }, heard.events);
    const double = await opened;
    expect(double.config.audio.input).toMatchObject({ transcription: { model: 'gpt-realtime-whisper' }, turn_detection: null });
    speak(session, 600, 400);
    await heard.until((told) => told.includes('final: Hello there.'), 'first final');
    speak(session, 400, 400);
    await heard.until((told) => told.includes('final: Goodbye.'), 'second final');
    expect(heard.told.filter((event) => event === 'speechStarted')).toHaveLength(2);
    // One commit per turn, each where the caller's words ended (our detector's 300 ms of quiet taken off).
    expect(double.received.filter((event) => event.type === 'input_audio_buffer.commit')).toHaveLength(2);
    expect(heard.finals).toEqual([
      { text: 'Hello there.', endOfTurn: true, audioEndMs: 600 },
      { text: 'Goodbye.', endOfTurn: true, audioEndMs: 600 + 400 + 400 },
    ]);
    session.close();
  });

  it('keeps each turn apart when a transcript comes after the next turn began', async () => {
    const heard = listener();
    fake.script.push({ caller: 'First late.', delayMs: 200 }, { caller: 'Second.' });
    const session = await recognizer().open({ model: '', language: 'en' }, heard.events);
    speak(session, 400, TURN_SILENCE_MS);
    speak(session, 400, TURN_SILENCE_MS);
    await heard.until((told) => told.filter((event) => event.startsWith('final')).length === 2, 'two finals');
    expect([...heard.finals].sort((a, b) => a.audioEndMs! - b.audioEndMs!)).toEqual([
      { text: 'First late.', endOfTurn: true, audioEndMs: 400 },
      { text: 'Second.', endOfTurn: true, audioEndMs: 400 + TURN_SILENCE_MS + 400 },
    ]);
    session.close();
  });

  it('finalize() commits what was heard while the caller speaks, and sends nothing otherwise', async () => {
    const heard = listener();
    fake.script.push({ caller: 'Cut short.' });
    const opened = fake.nextSession();
    const session = await recognizer().open({ model: '', language: 'en' }, heard.events);
    const double = await opened;
    session.finalize();
    speak(session, 300, 0);
    await heard.until((told) => told.includes('speechStarted'), 'speech');
    session.finalize();
    await heard.until((told) => told.includes('final: Cut short.'), 'the committed final');
    expect(heard.finals).toEqual([{ text: 'Cut short.', endOfTurn: true, audioEndMs: 300 }]);
    expect(double.received.filter((event) => event.type === 'input_audio_buffer.commit')).toHaveLength(1);
    session.close();
  });

  it('ends a turn without words when its transcription fails', async () => {
    const heard = listener();
    fake.script.push({ caller: '', fail: true });
    const session = await recognizer().open({ model: '', language: 'en' }, heard.events);
    speak(session, 400, TURN_SILENCE_MS);
    await heard.until((told) => told.some((event) => event.startsWith('utteranceEnd')), 'the end of the turn');
    expect(heard.told).toEqual(['speechStarted', 'utteranceEnd: 400']);
    session.close();
  });

  it('rejects open() for a refused key in OpenAI words, without the key', async () => {
    const wrongKey = 'sk-proj-notthekeynotthekey4321';
    const attempt = recognizer(wrongKey).open({ model: '', language: 'en' }, listener().events);
    await expect(attempt).rejects.toThrow(
      /^OpenAI refused the transcription session \(HTTP 401: Incorrect API key provided: sk-…\. You can find your API key at https:\/\/platform\.openai\.com\/account\/api-keys\.\)$/,
    );
    const message = await attempt.catch((error: Error) => error.message);
    expect(message).not.toContain(wrongKey);
    expect(message).not.toContain('4321');
  });

  it('rejects open() when the service refuses the session or never confirms it', async () => {
    fake.refuseWith = 429;
    await expect(recognizer().open({ model: '', language: 'en' }, listener().events)).rejects.toThrow(
      'OpenAI refused the transcription session (HTTP 429: Rate limit reached for realtime sessions. Please try again later.)',
    );
    fake.refuseWith = null;
    fake.confirmsUpdates = false;
    await expect(recognizer(TRANSCRIPTION_TEST_KEY, 300).open({ model: '', language: 'en' }, listener().events)).rejects.toThrow(
      'OpenAI did not confirm the transcription session within 300 ms',
    );
  });

  it('tells a dropped socket as lost, once, and nothing after', async () => {
    const heard = listener();
    const opened = fake.nextSession();
    const session = await recognizer().open({ model: '', language: 'en' }, heard.events);
    const double = await opened;
    double.drop();
    await heard.until((told) => told.some((event) => event.startsWith('lost')), 'lost');
    expect(heard.told).toEqual([expect.stringMatching(/^lost: OpenAI closed the transcription session \(code 1006\)$/)]);
    session.send(SILENCE);
    session.finalize();
    session.close();
    expect(heard.told).toHaveLength(1);
  });

  it("tells the service's error and close as lost in its words", async () => {
    const heard = listener();
    const opened = fake.nextSession();
    await recognizer().open({ model: '', language: 'en' }, heard.events);
    const double = await opened;
    double.fail({ type: 'invalid_request_error', code: 'session_expired', message: 'Your session hit the maximum duration of 60 minutes.' });
    await heard.until((told) => told.some((event) => event.startsWith('lost')), 'lost');
    expect(heard.told).toEqual(['lost: OpenAI closed the transcription session (code 1011: Your session hit the maximum duration of 60 minutes.)']);
  });

  it('close() ends the session with no event', async () => {
    const heard = listener();
    const opened = fake.nextSession();
    const session = await recognizer().open({ model: '', language: 'en' }, heard.events);
    const double = await opened;
    session.close();
    await double.closed;
    expect(heard.told).toEqual([]);
  });
});
