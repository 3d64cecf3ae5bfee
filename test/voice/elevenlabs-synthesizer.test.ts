import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ElevenLabsSynthesizer } from '../../src/modules/voice/streaming/elevenlabs.js';
import type { SynthesisEvents, SynthesisStream } from '../../src/modules/voice/streaming/speech-ports.js';
import { MS_PER_CHAR, rms, startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { POLICY } from './fixtures.js';

// The gateway's ElevenLabs synthesizer against the ElevenLabs double: sentences in, μ-law out with
// how far the audio has come in the text, the end of a reply, a reply cut short, and every way the
// stream can fail, each in the words a call record gets. No database, no timed assertions: every
// wait is for an event, and the double's faults decide what happens.

const KEY = 'xi-secret-test-key-0123456789';

let fake: FakeElevenLabs;

beforeAll(async () => {
  fake = await startFakeElevenLabs({ apiKey: KEY });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => fake.reset());

/** The events of one stream, recorded, with a way to wait for the one that ends it. */
function recorder() {
  const audio: { ulaw: Buffer; textEnd: number }[] = [];
  const log: string[] = [];
  let settle: (outcome: string) => void = () => undefined;
  const ended = new Promise<string>((resolve) => (settle = resolve));
  let onAudio: (() => void) | null = null;
  const events: SynthesisEvents = {
    audio(ulaw, textEnd) {
      audio.push({ ulaw, textEnd });
      log.push('audio');
      onAudio?.();
    },
    done() {
      log.push('done');
      settle('done');
    },
    lost(reason) {
      log.push(`lost: ${reason}`);
      settle(`lost: ${reason}`);
    },
  };
  /** Resolves once audio reaching `textEnd` has come. */
  const reached = (textEnd: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (audio.some((entry) => entry.textEnd >= textEnd)) resolve();
      };
      onAudio = check;
      check();
    });
  return { events, audio, log, ended, reached, setOnAudio: (listener: () => void) => (onAudio = listener) };
}

function synthesizer(overrides: Partial<ConstructorParameters<typeof ElevenLabsSynthesizer>[0]> = {}) {
  return new ElevenLabsSynthesizer({ apiKey: KEY, baseUrl: fake.baseUrl, ...overrides });
}

const SENTENCES = ['Hello, this is Ava from the clinic.', ' I can move your appointment to Tuesday at 3 pm.', ' Does that work for you?'];

describe('ElevenLabsSynthesizer', () => {
  it('names itself, its low-latency model and a default voice, and says what is missing without a key', () => {
    const ready = synthesizer();
    expect([ready.name, ready.defaultModel, ready.defaultVoice]).toEqual(['elevenlabs', 'eleven_flash_v2_5', 'Xb7hH8MSUJpSbSDYk0k2']);
    expect(ready.missing()).toBeNull();
    expect(new ElevenLabsSynthesizer({}).missing()).toBe('ELEVENLABS_API_KEY is not set');
    expect(ready.url({ voiceId: 'voice123', model: '' }).toString()).toBe(
      `${fake.baseUrl}/v1/text-to-speech/voice123/stream-input?model_id=eleven_flash_v2_5&output_format=ulaw_8000&auto_mode=true&sync_alignment=true`,
    );
  });

  it('speaks sentences in order as μ-law, each as soon as it is pushed, with a textEnd that grows to the whole text, then done after end', async () => {
    const recorded = recorder();
    const opening = fake.nextStream();
    const stream = await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    const seen = await opening;
    expect(seen.voiceId).toBe('Xb7hH8MSUJpSbSDYk0k2');
    expect(seen.headers['xi-api-key']).toBe(KEY);
    expect(Object.fromEntries(seen.query)).toEqual({ model_id: 'eleven_flash_v2_5', output_format: 'ulaw_8000', auto_mode: 'true', sync_alignment: 'true' });

    // Each sentence is spoken whole before the next is pushed, and before the reply ends.
    let pushed = 0;
    for (const sentence of SENTENCES) {
      stream.push(sentence);
      pushed += sentence.length;
      await recorded.reached(pushed);
    }
    expect(recorded.log).not.toContain('done');
    stream.end();
    expect(await recorded.ended).toBe('done');

    const full = SENTENCES.join('');
    const ends = recorded.audio.map((entry) => entry.textEnd);
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    expect(ends.at(-1)).toBe(full.length);
    expect(Math.max(...ends)).toBeLessThanOrEqual(full.length);
    expect(ends.filter((end) => end > 0 && end < full.length).length).toBeGreaterThan(3);
    expect(recorded.log.at(-1)).toBe('done');
    expect(recorded.log.filter((entry) => entry === 'done')).toHaveLength(1);
    // The audio is the double's speech: MS_PER_CHAR of μ-law 8 kHz per character sent, words loud.
    const audio = Buffer.concat(recorded.audio.map((entry) => entry.ulaw));
    const sent = seen.texts.join('');
    expect(audio.length).toBe(sent.length * 8 * MS_PER_CHAR);
    expect(rms(recorded.audio[0]!.ulaw)).toBeGreaterThan(1500);
    // ElevenLabs got the sentences in order, each ending with the single space it asks for, and nothing else.
    expect(fake.texts).toEqual(SENTENCES.map((sentence) => `${sentence.trimEnd()} `));
    expect(fake.texts.join('')).not.toContain(POLICY);
    expect(seen.initialization).toEqual({ text: ' ', voice_settings: { stability: 0.5, similarity_boost: 0.8, use_speaker_boost: false } });
    expect(fake.problems).toEqual([]);
    expect((await seen.closed).code).toBe(1000);
  });

  it('counts spaces-only pushes and trailing whitespace as text, so textEnd still reaches the whole text', async () => {
    const recorded = recorder();
    const stream = await synthesizer().open({ voiceId: 'Xb7hH8MSUJpSbSDYk0k2', model: 'eleven_flash_v2_5' }, recorded.events);
    const pushes = ['Yes.\n', '  ', 'Of course!  '];
    for (const text of pushes) stream.push(text);
    stream.end();
    expect(await recorded.ended).toBe('done');
    expect(recorded.audio.at(-1)!.textEnd).toBe(pushes.join('').length);
    expect(fake.texts).toEqual(['Yes. ', 'Of course! ']);
    expect(fake.problems).toEqual([]);
  });

  it('speaks the same way when ElevenLabs is slow: a late first audio, chunks slower than real time, a faster voice', async () => {
    fake.faults.firstAudioDelayMs = 50;
    fake.faults.chunkIntervalMs = 10;
    fake.faults.speed = 2;
    const recorded = recorder();
    const stream = await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    stream.push(SENTENCES[0]!);
    stream.end();
    expect(await recorded.ended).toBe('done');
    expect(recorded.audio.at(-1)!.textEnd).toBe(SENTENCES[0]!.length);
    expect(Buffer.concat(recorded.audio.map((entry) => entry.ulaw)).length).toBe((SENTENCES[0]!.length + 1) * 8 * Math.round(MS_PER_CHAR / 2));
  });

  it('cancel() closes the socket at once and no event follows', async () => {
    fake.faults.chunkIntervalMs = 20;
    const recorded = recorder();
    const opening = fake.nextStream();
    let stream: SynthesisStream | null = null;
    stream = await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    const seen = await opening;
    const cancelled = new Promise<void>((resolve) =>
      recorded.setOnAudio(() => {
        stream!.cancel();
        resolve();
      }),
    );
    stream.push(SENTENCES[1]!);
    stream.end();
    await cancelled;
    const closed = await seen.closed;
    expect(closed.code).toBe(1000);
    expect(recorded.log).toEqual(['audio']);
    stream.push('More text. ');
    stream.end();
    expect(recorded.log).toEqual(['audio']);
  });

  it('open() rejects with ElevenLabs’ words and never the key when the key is refused at the handshake', async () => {
    const refused = synthesizer({ apiKey: 'xi-wrong-key-abcdef' });
    const failure = refused.open({ voiceId: '', model: '' }, recorder().events);
    await expect(failure).rejects.toThrow('ElevenLabs refused the stream (HTTP 401: invalid_api_key: Invalid API key)');
    await failure.catch((error: Error) => expect(error.message).not.toContain('xi-wrong-key'));
    fake.faults.refuseKey = true;
    await expect(synthesizer().open({ voiceId: '', model: '' }, recorder().events)).rejects.toThrow(/HTTP 401/);
    fake.faults.refuseKey = false;
    await expect(synthesizer().open({ voiceId: '', model: 'eleven_v3' }, recorder().events)).rejects.toThrow(/HTTP 403: model_not_supported/);
  });

  it('reports lost with ElevenLabs’ words when the key is refused by a 1008 close after the first message', async () => {
    fake.faults.keyRefusal = 'close';
    fake.faults.refuseKey = true;
    const recorded = recorder();
    const stream = await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    stream.push(SENTENCES[0]!);
    const outcome = await recorded.ended;
    expect(outcome).toBe('lost: ElevenLabs closed the stream (code 1008: Invalid API key)');
    expect(outcome).not.toContain(KEY);
  });

  it('reports lost when the socket drops mid-reply, and nothing after', async () => {
    fake.faults.dropAfterChunks = 2;
    const recorded = recorder();
    const stream = await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    stream.push(SENTENCES[1]!);
    stream.end();
    expect(await recorded.ended).toBe('lost: ElevenLabs closed the stream (code 1006)');
    expect(recorded.log).toEqual(['audio', 'audio', 'lost: ElevenLabs closed the stream (code 1006)']);
  });

  it('rejects open() when ElevenLabs never answers the handshake, and reports lost when it never speaks', async () => {
    fake.faults.hang = 'handshake';
    await expect(synthesizer({ openTimeoutMs: 100 }).open({ voiceId: '', model: '' }, recorder().events)).rejects.toThrow(
      /^ElevenLabs could not be reached \(.*timed out.*\)$/,
    );
    fake.faults.hang = 'audio';
    const recorded = recorder();
    const stream = await synthesizer({ silenceTimeoutMs: 100 }).open({ voiceId: '', model: '' }, recorded.events);
    stream.push(SENTENCES[0]!);
    expect(await recorded.ended).toBe('lost: ElevenLabs sent no audio for 0.1 s');
  });

  it('reports ElevenLabs’ own words when it closes an idle stream', async () => {
    fake.faults.inactivityMs = 20;
    const recorded = recorder();
    await synthesizer().open({ voiceId: '', model: '' }, recorded.events);
    expect(await recorded.ended).toMatch(
      /^lost: ElevenLabs closed the stream \(code 1008: Have not received a new text input within the timeout of 20 seconds\./,
    );
  });

  it('rejects open() without a key, and when nothing listens at the base', async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(new ElevenLabsSynthesizer({ baseUrl: fake.baseUrl }).open({ voiceId: '', model: '' }, recorder().events)).rejects.toThrow(
      'ELEVENLABS_API_KEY is not set',
    );
    await expect(synthesizer({ baseUrl: `ws://127.0.0.1:${port}` }).open({ voiceId: '', model: '' }, recorder().events)).rejects.toThrow(
      /^ElevenLabs could not be reached \(.*ECONNREFUSED.*\)$/,
    );
  });
});
