import { pcmToUlaw, ulawToPcm } from '../realtime/audio.js';
import { EndOfSpeechDetector } from '../realtime/end-of-speech.js';
import {
  BUILTIN_MS_PER_BYTE,
  BUILTIN_PREAMBLE_MS,
  BuiltinRecognizer,
  BuiltinSynthesizer,
  decodeSpeech,
  encodeSpeech,
  speechDurationMs,
} from './builtin-speech.js';
import type { RecognizerEvents, RecognizerSession, SynthesisEvents } from './speech-ports.js';

// The builtin pair: text → μ-law → text, through frames of any size; utterances, their finals and
// audio offsets as the pipeline expects them from a recognizer; nothing heard in noise, a voice or
// keys; the synthesizer's chunks, textEnd, done and cancel. The CPU per second of audio is printed
// for the notes, never asserted.

/** A seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `audio` cut into frames of 1 to 400 bytes. */
function randomFrames(audio: Buffer, seed: number): Buffer[] {
  const next = random(seed);
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length;) {
    const size = 1 + Math.floor(next() * 400);
    frames.push(audio.subarray(offset, offset + size));
    offset += size;
  }
  return frames;
}

const silence = (ms: number) => Buffer.alloc(ms * 8, 0xff);

/** Twilio's 20 ms frames of `audio`. */
function frames20(audio: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += 160) frames.push(audio.subarray(offset, offset + 160));
  return frames;
}

/** Lets the session's queued events out (one per turn of the event loop). */
async function drain(turns = 200): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A recognizer session whose events are written down in order. */
async function listening(options: { delayMs?: number } = {}): Promise<{ session: RecognizerSession; heard: string[] }> {
  const heard: string[] = [];
  const events: RecognizerEvents = {
    speechStarted: () => heard.push('speechStarted'),
    interim: (text) => heard.push(`interim ${text}`),
    final: (text, endOfTurn, audioEndMs) => heard.push(`final ${text} ${endOfTurn} @${audioEndMs}`),
    utteranceEnd: (audioEndMs) => heard.push(`utteranceEnd @${audioEndMs}`),
    lost: (reason) => heard.push(`lost ${reason}`),
  };
  const session = await new BuiltinRecognizer(options).open({ model: 'builtin', language: 'en' }, events);
  return { session, heard };
}

const texts = [
  'Hello, world!',
  'My number is 0044 20 7946 0958; call me at 9:30 a.m. (or later).',
  'café, naïve, Zürich — “quoted” ¿sí? ¡olé!',
  'An emoji 😀 and a mug ☕ and CJK 电话.',
  'a',
  ' spaces  inside and around ',
  'tabs\tand\nnewlines',
  '~`!@#$%^&*()_+-={}[]|\\:";\'<>?,./',
];

describe('encodeSpeech and the decoder', () => {
  it.each(texts.map((text, index) => [text, index] as const))('round trip through random frame sizes: %j', async (text, seed) => {
    const audio = encodeSpeech(text);
    expect(audio.length).toBe(speechDurationMs(text) * 8);
    const frames = randomFrames(Buffer.concat([silence(100), audio, silence(400)]), seed);
    expect(decodeSpeech(Buffer.concat(frames))).toEqual([text]);
    // A session fed the same frames one by one hears the same, as one final.
    const { session, heard } = await listening();
    for (const frame of frames) session.send(frame);
    await drain();
    expect(heard.filter((event) => event.startsWith('final'))).toEqual([`final ${text} true @${100 + audio.length / 8}`]);
  });

  it('sends a lone surrogate (not valid UTF-16) as U+FFFD, every other character as it is', () => {
    expect(decodeSpeech(encodeSpeech('a\uD800b'))).toEqual(['a\uFFFDb']);
    expect(encodeSpeech('')).toHaveLength(0);
  });

  it('lasts about as long as speech: 96 ms of preamble and 64 ms a byte (a 40-character sentence in 2.7 s)', () => {
    expect(BUILTIN_PREAMBLE_MS).toBe(96);
    expect(BUILTIN_MS_PER_BYTE).toBe(64);
    const sentence = 'The quick brown fox jumps over the dog.!';
    expect(sentence).toHaveLength(40);
    expect(encodeSpeech(sentence).length / 8).toBe(96 + 40 * 64);
    // A character of several UTF-8 bytes takes as many byte times.
    expect(speechDurationMs('é')).toBe(96 + 2 * 64);
    expect(speechDurationMs('😀')).toBe(96 + 4 * 64);
  });

  it('is speech to the phone-line energy VAD: one onset, one end 300 ms after it, no gap within', () => {
    let ended = 0;
    const detector = new EndOfSpeechDetector(() => ended++);
    for (const frame of frames20(Buffer.concat([silence(200), encodeSpeech('Is this loud and long enough, for a VAD?'), silence(280)]))) detector.push(frame);
    expect(ended).toBe(0);
    for (const frame of frames20(silence(40))) detector.push(frame);
    expect(ended).toBe(1);
  });

  it('decodes through added noise 20 dB below it, and two segments back to back as two', () => {
    const next = random(7);
    const samples = ulawToPcm(encodeSpeech('Noise does not hurt: 123.'));
    const noisy = pcmToUlaw(Int16Array.from(samples, (x) => x + Math.round((next() - 0.5) * 1700)));
    expect(decodeSpeech(noisy)).toEqual(['Noise does not hurt: 123.']);
    expect(decodeSpeech(Buffer.concat([encodeSpeech('one two'), encodeSpeech('three')]))).toEqual(['one two', 'three']);
  });

  it('hears nothing in silence, white noise, a voice-like signal or DTMF keys', () => {
    const next = random(3);
    const seconds = 1;
    const noise = Int16Array.from({ length: 8000 * seconds }, () => Math.round((next() - 0.5) * 12_000));
    const voice = Int16Array.from({ length: 8000 * seconds }, (_, i) => {
      // Voiced speech, roughly: a gliding fundamental with falling harmonics under a syllable envelope.
      const t = i / 8000;
      const f0 = 120 + 60 * Math.sin(2 * Math.PI * 0.7 * t);
      let sum = 0;
      for (let harmonic = 1; harmonic * f0 < 3400; harmonic++) sum += Math.sin(2 * Math.PI * f0 * harmonic * t) / harmonic;
      return Math.round(6000 * (0.5 + 0.5 * Math.sin(2 * Math.PI * 4 * t)) * sum);
    });
    const dtmf = Int16Array.from({ length: 8000 * seconds }, (_, i) => {
      // The keys 1, 5, 9, # for 100 ms each with 100 ms between.
      const keys = [
        [697, 1209],
        [770, 1336],
        [852, 1477],
        [941, 1477],
      ] as const;
      const slot = Math.floor(i / 800);
      if (slot % 2 === 1) return 0;
      const [low, high] = keys[(slot / 2) % 4]!;
      return Math.round(8000 * (Math.sin((2 * Math.PI * low * i) / 8000) + Math.sin((2 * Math.PI * high * i) / 8000)));
    });
    for (const signal of [new Int16Array(8000), noise, voice, dtmf]) expect(decodeSpeech(pcmToUlaw(signal))).toEqual([]);
  });
});

describe('BuiltinRecognizer', () => {
  it('names itself builtin and needs nothing', () => {
    const recognizer = new BuiltinRecognizer();
    expect([recognizer.name, recognizer.defaultModel, recognizer.missing()]).toEqual(['builtin', 'builtin', null]);
  });

  it('two utterances apart: speechStarted, interims by word, final with where the audio ended, utteranceEnd after 1 s', async () => {
    const { session, heard } = await listening();
    const first = encodeSpeech('Hi there, Bob.');
    const second = encodeSpeech('Yes.');
    const audio = Buffer.concat([silence(300), first, silence(600), second, silence(1200)]);
    for (const frame of frames20(audio)) session.send(frame);
    await drain();
    const firstEnd = 300 + first.length / 8;
    const secondEnd = firstEnd + 600 + second.length / 8;
    expect(heard).toEqual([
      'speechStarted',
      'interim Hi ',
      'interim Hi there, ',
      'interim Hi there, Bob.',
      `final Hi there, Bob. true @${firstEnd}`,
      // 600 ms of silence: final, but no utteranceEnd, as speech came back before 1000 ms.
      'speechStarted',
      'interim Yes.',
      `final Yes. true @${secondEnd}`,
      `utteranceEnd @${secondEnd}`,
    ]);
  });

  it('counts silence in audio, not in time: no final until 300 ms of silence have been sent', async () => {
    const { session, heard } = await listening();
    const audio = encodeSpeech('Wait.');
    session.send(audio);
    session.send(silence(200));
    await drain();
    expect(heard).toEqual(['speechStarted', 'interim Wait.']);
    session.send(silence(120));
    await drain();
    expect(heard).toEqual(['speechStarted', 'interim Wait.', `final Wait. true @${audio.length / 8}`]);
  });

  it('a segment less than 300 ms after the last continues the utterance, joined with a space', async () => {
    const { session, heard } = await listening();
    const audio = Buffer.concat([encodeSpeech('Hello.'), silence(150), encodeSpeech('How are you?'), silence(1100)]);
    for (const frame of randomFrames(audio, 11)) session.send(frame);
    await drain();
    const end = audio.length / 8 - 1100;
    expect(heard.filter((event) => !event.startsWith('interim'))).toEqual(['speechStarted', `final Hello. How are you? true @${end}`, `utteranceEnd @${end}`]);
  });

  it('finalize() makes what was heard final at once; the rest of the utterance comes in the next final', async () => {
    const { session, heard } = await listening();
    const audio = encodeSpeech('one two three');
    // 'one two ' is 8 bytes: 96 + 8 × 64 = 608 ms, sent with a little of 'three'.
    session.send(audio.subarray(0, 640 * 8));
    session.finalize();
    await drain();
    expect(heard).toEqual(['speechStarted', 'interim one ', 'interim one two ', 'final one two  true @608']);
    session.send(audio.subarray(640 * 8));
    session.send(silence(1100));
    await drain();
    const end = audio.length / 8;
    expect(heard.slice(4)).toEqual(['interim three', `final three true @${end}`, `utteranceEnd @${end}`]);
    // Nothing pending: finalize() says nothing.
    session.finalize();
    await drain();
    expect(heard).toHaveLength(7);
  });

  it('delayMs holds the final (and what follows it) that long, order kept', async () => {
    const { session, heard } = await listening({ delayMs: 60 });
    session.send(Buffer.concat([encodeSpeech('Slow.'), silence(1100)]));
    const sent = Date.now();
    await drain(20);
    expect(heard).toEqual(['speechStarted', 'interim Slow.']);
    while (heard.length < 4 && Date.now() - sent < 2000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard.slice(2)).toEqual([`final Slow. true @${speechDurationMs('Slow.')}`, `utteranceEnd @${speechDurationMs('Slow.')}`]);
  });

  it('close() stops every event, even those already queued', async () => {
    const { session, heard } = await listening();
    session.send(Buffer.concat([encodeSpeech('Bye now.'), silence(1100)]));
    session.close();
    session.send(encodeSpeech('ignored'));
    await drain();
    expect(heard).toEqual([]);
  });
});

/** A synthesis stream whose events are written down. */
async function speaking(options: { delayMs?: number } = {}, onAudio?: (count: number) => void) {
  const chunks: { audio: Buffer; textEnd: number; at: number }[] = [];
  const log: string[] = [];
  const events: SynthesisEvents = {
    audio: (audio, textEnd) => {
      chunks.push({ audio, textEnd, at: Date.now() });
      log.push('audio');
      onAudio?.(chunks.length);
    },
    done: () => log.push('done'),
    lost: (reason) => log.push(`lost ${reason}`),
  };
  const synthesizer = new BuiltinSynthesizer({ voice: 'modem', ...options });
  const stream = await synthesizer.open({ voiceId: synthesizer.defaultVoice, model: synthesizer.defaultModel }, events);
  return { stream, chunks, log };
}

async function until(done: () => boolean, timeoutMs = 3000): Promise<void> {
  const start = Date.now();
  while (!done() && Date.now() - start < timeoutMs) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('BuiltinSynthesizer', () => {
  it('names itself builtin and needs nothing', () => {
    const synthesizer = new BuiltinSynthesizer();
    expect([synthesizer.name, synthesizer.defaultModel, synthesizer.defaultVoice, synthesizer.missing()]).toEqual(['builtin', 'builtin', 'builtin', null]);
  });

  it('emits each push as its encoding, in chunks of up to 60 ms, textEnd growing per character, then done', async () => {
    const { stream, chunks, log } = await speaking();
    const first = 'Hello there. ';
    const second = 'Café? 😀';
    stream.push(first);
    stream.push(second);
    stream.end();
    // Nothing is emitted during push(): a provider's audio comes later.
    expect(log).toEqual([]);
    await until(() => log.includes('done'));
    expect(log.at(-1)).toBe('done');
    expect(log.filter((event) => event === 'done')).toHaveLength(1);
    expect(Buffer.concat(chunks.map((chunk) => chunk.audio))).toEqual(Buffer.concat([encodeSpeech(first), encodeSpeech(second)]));
    for (const chunk of chunks) expect(chunk.audio.length).toBeLessThanOrEqual(480);
    const ends = chunks.map((chunk) => chunk.textEnd);
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    expect(ends.at(-1)).toBe(first.length + second.length);
    // Within the first push (ASCII): after b bytes of audio, the characters whose 512 bytes are all there.
    let emitted = 0;
    for (const chunk of chunks) {
      emitted += chunk.audio.length;
      if (emitted > encodeSpeech(first).length) break;
      expect(chunk.textEnd).toBe(Math.min(first.length, Math.max(0, Math.floor((emitted - 768) / 512))));
    }
    // The 😀 (two UTF-16 units) counts once its four bytes are out.
    expect(ends).not.toContain(first.length + second.length - 1);
  });

  it('is heard by the recognizer as the text pushed', async () => {
    const { stream, chunks, log } = await speaking();
    stream.push('Your table is booked for 7 p.m.');
    stream.push('See you then!');
    stream.end();
    await until(() => log.includes('done'));
    const { session, heard } = await listening();
    for (const frame of frames20(Buffer.concat([...chunks.map((chunk) => chunk.audio), silence(1100)]))) session.send(frame);
    await drain();
    expect(heard.filter((event) => event.startsWith('final'))).toEqual([
      `final Your table is booked for 7 p.m. See you then! true @${chunks.reduce((ms, chunk) => ms + chunk.audio.length / 8, 0)}`,
    ]);
  });

  it('done comes after end() even with nothing pushed, and pushes after end() are ignored', async () => {
    const { stream, log } = await speaking();
    stream.end();
    stream.push('too late');
    await until(() => log.includes('done'));
    await drain(20);
    expect(log).toEqual(['done']);
  });

  it('cancel() stops everything: no more audio, no done', async () => {
    // The caller speaks over the agent as its third chunk is handed over.
    const { stream, chunks, log } = await speaking({}, (count) => count === 3 && stream.cancel());
    stream.push('A long sentence that will be cut off in the middle by the caller.');
    stream.push('And this one is never heard.');
    stream.end();
    await drain(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chunks).toHaveLength(3);
    expect(log).not.toContain('done');
  });

  it('delayMs holds each push’s first audio that long after its push', async () => {
    const { stream, chunks, log } = await speaking({ delayMs: 50 });
    const pushed = Date.now();
    stream.push('Hm.');
    stream.end();
    await until(() => log.includes('done'));
    expect(chunks[0]!.at - pushed).toBeGreaterThanOrEqual(45);
    expect(decodeSpeech(Buffer.concat(chunks.map((chunk) => chunk.audio)))).toEqual(['Hm.']);
  });
});

describe('cost', () => {
  it('measures the CPU per second of audio: encoding, and decoding code, silence and noise in 20 ms frames (printed, not asserted)', async () => {
    const text = 'The builtin pair costs this much per second of audio, encoded and decoded. ';
    const repeat = 5;
    const start = process.cpuUsage();
    const audio = Buffer.concat(Array.from({ length: repeat }, () => encodeSpeech(text)));
    const encoded = process.cpuUsage(start);
    const seconds = audio.length / 8000;
    const { session, heard } = await listening();
    const frames = frames20(audio);
    const before = process.cpuUsage();
    for (const frame of frames) session.send(frame);
    const decoded = process.cpuUsage(before);
    const silent = frames20(silence(Math.round(seconds * 1000)));
    const beforeSilence = process.cpuUsage();
    for (const frame of silent) session.send(frame);
    const quiet = process.cpuUsage(beforeSilence);
    // Noise loud enough to be measured (the hunt's worst case: every block above the quiet threshold).
    const next = random(5);
    const noise = frames20(pcmToUlaw(Int16Array.from({ length: audio.length }, () => Math.round((next() - 0.5) * 12_000))));
    const beforeNoise = process.cpuUsage();
    for (const frame of noise) session.send(frame);
    const noisy = process.cpuUsage(beforeNoise);
    await drain(400);
    expect(heard.filter((event) => event.startsWith('final'))).toEqual([`final ${text.repeat(repeat)} true @${Math.round(seconds * 1000)}`]);
    const perSecond = (usage: NodeJS.CpuUsage) => ((usage.user + usage.system) / 1000 / seconds).toFixed(2);
    console.log(
      `builtin speech CPU per second of audio (${seconds.toFixed(1)} s): encode ${perSecond(encoded)} ms, decode ${perSecond(decoded)} ms, decode silence ${perSecond(quiet)} ms, decode noise ${perSecond(noisy)} ms`,
    );
  });
});
