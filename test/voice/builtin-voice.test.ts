import { ulawToPcm } from '../../src/modules/voice/realtime/audio.js';
import { encodeSpeech } from '../../src/modules/voice/streaming/builtin-modem.js';
import { BuiltinSynthesizer } from '../../src/modules/voice/streaming/builtin-speech.js';
import { AGENT_VOICE, CALLER_VOICE, EspeakVoices, MAX_UTTERANCE_CHARACTERS, utterancePieces } from '../../src/modules/voice/streaming/espeak-voices.js';
import { simulatedRecording } from '../../src/modules/recordings/simulated-recording.js';
import { builtinVoice } from '../../src/modules/voice/streaming/espeak-voices.js';
import { readWav, says } from '../recordings/fixtures.js';
import { isSpeech, speechReport } from '../support/speech-detector.js';

// The builtin voice (eSpeak NG in a thread of its own): speech, two voices, bounded, and a thread
// that dies does not take the call with it.

const voices = new EspeakVoices();
afterAll(() => Promise.all([voices.close(), builtinVoice().close()]));

const LINE = 'Of course, I can move your delivery to Monday morning between nine and eleven.';

describe('the builtin voice', () => {
  it('speaks words: telephone-band energy, a pitch, no steady tones; the modem’s tones are not speech', async () => {
    const spoken = await voices.speak(LINE);
    const report = speechReport(ulawToPcm(spoken.ulaw));
    expect(isSpeech(report)).toBe(true);
    // About as long as a person says it (eSpeak's 175 words a minute), not a chirp of a byte per 64 ms.
    expect(spoken.ulaw.length / 8).toBeGreaterThan(3000);
    expect(spoken.ulaw.length / 8).toBeLessThan(6000);
    const modem = speechReport(ulawToPcm(encodeSpeech(LINE)));
    expect(modem.toneShare).toBeGreaterThan(0.5);
    expect(isSpeech(modem)).toBe(false);
    // Each word's start, in order, inside the audio.
    expect(spoken.words.map((word) => LINE.slice(word.textStart).split(/[\s,.]/)[0])).toEqual(LINE.replace(/[,.]/g, '').split(' '));
    for (let i = 1; i < spoken.words.length; i++) expect(spoken.words[i]!.sample).toBeGreaterThan(spoken.words[i - 1]!.sample);
  });

  it('says the same words the same way, byte for byte, whatever it said before', async () => {
    const once = await voices.speak(LINE);
    await voices.speak('Something else entirely, with more words.', CALLER_VOICE);
    await voices.speak('And one more.');
    expect((await voices.speak(LINE)).ulaw.equals(once.ulaw)).toBe(true);
  });

  it('gives the simulated caller another voice than the agent’s (a higher pitch)', async () => {
    const agent = speechReport(ulawToPcm((await voices.speak(LINE, AGENT_VOICE)).ulaw));
    const caller = speechReport(ulawToPcm((await voices.speak(LINE, CALLER_VOICE)).ulaw));
    expect(isSpeech(caller)).toBe(true);
    expect(caller.medianPitchHz! / agent.medianPitchHz!).toBeGreaterThan(1.3);
  });

  it('speaks a text longer than an utterance in pieces cut between words, nothing lost', async () => {
    const WORDS = ['apple', 'banana', 'cherry', 'melon', 'orange', 'peach'];
    const long = Array.from({ length: 120 }, (_, i) => WORDS[i % WORDS.length]).join(' ');
    const pieces = utterancePieces(long);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(long);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(MAX_UTTERANCE_CHARACTERS);
    expect(pieces.slice(0, -1).every((piece) => piece.endsWith(' '))).toBe(true);
    const spoken = await voices.speak(long);
    expect(spoken.words).toHaveLength(120);
    expect(spoken.words.map((word) => long.slice(word.textStart).split(' ')[0])).toEqual(long.split(' '));
  });

  it('refuses utterances past the waiting bound at once, and speaks the ones it took', async () => {
    const small = new EspeakVoices({ maxWaiting: 2 });
    try {
      const results = await Promise.allSettled(['One.', 'Two.', 'Three.'].map((text) => small.speak(text)));
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(String((results[2] as PromiseRejectedResult).reason)).toContain('busy');
      expect(small.starts).toBe(1);
    } finally {
      await small.close();
    }
  });
});

describe('a builtin voice thread that dies', () => {
  const crashing = new URL('../support/espeak-crashing-thread.ts', import.meta.url);

  it('is started again, and the utterance it held is spoken there: the call goes on', async () => {
    const faulty = new EspeakVoices({ threadUrl: crashing });
    try {
      const [before, crashed] = await Promise.all([faulty.speak('Hello there.'), faulty.speak('CRASH-ONCE, then carry on.')]);
      expect(isSpeech(speechReport(ulawToPcm(crashed.ulaw)))).toBe(true);
      expect(before.ulaw.length).toBeGreaterThan(0);
      expect(faulty.starts).toBe(2);
    } finally {
      await faulty.close();
    }
  });

  it('fails an utterance that kills it twice with a clear error, and speaks the next one', async () => {
    const faulty = new EspeakVoices({ threadUrl: crashing });
    try {
      await expect(faulty.speak('POISON')).rejects.toThrow(/thread stopped \(exit code 3\); the utterance was not spoken/);
      const next = await faulty.speak('Still here.');
      expect(isSpeech(speechReport(ulawToPcm(next.ulaw)))).toBe(true);
      expect(faulty.starts).toBe(3);
    } finally {
      await faulty.close();
    }
  });
});

describe('a simulated call’s recording', () => {
  it('is speech on both sides: the gateway in the agent’s voice, the callee in the caller’s, each where it was said', async () => {
    const { wav, durationSeconds } = await simulatedRecording(['Say hello'], ['Yes, that works for me.'], 'dual');
    const { channels, samples } = readWav(wav);
    expect(channels).toBe(2);
    const [callee, gateway] = samples as [Int16Array, Int16Array];
    const gatewaySays = await says(gateway, 'Say hello');
    expect([gatewaySays.speech, gatewaySays.sameLength]).toEqual([true, true]);
    expect(gatewaySays.correlation).toBeGreaterThan(0.9);
    const calleeSays = await says(callee, 'Yes, that works for me.', CALLER_VOICE);
    expect([calleeSays.speech, calleeSays.sameLength]).toEqual([true, true]);
    expect(calleeSays.correlation).toBeGreaterThan(0.9);
    // The callee speaks after the gateway (silent while it speaks), in the higher voice.
    const firstCallee = callee.findIndex((sample) => sample !== 0);
    expect(gateway.subarray(firstCallee).every((sample) => sample === 0)).toBe(true);
    expect(speechReport(callee).medianPitchHz! / speechReport(gateway).medianPitchHz!).toBeGreaterThan(1.3);
    // Other words do not pass for these.
    expect((await says(gateway, 'Thank you, goodbye.')).correlation).toBeLessThan(0.8);
    expect(durationSeconds).toBe(Math.max(1, Math.round(callee.length / 8000)));

    const mono = readWav((await simulatedRecording(['Say hello'], ['Yes, that works for me.'], 'mono')).wav);
    expect(mono.channels).toBe(1);
    expect(isSpeech(speechReport(mono.samples[0]!))).toBe(true);
  });
});

describe('the builtin synthesizer in the streaming pipeline', () => {
  /** One reply's stream, its events written down; resolves once it is done or lost. */
  async function reply(synthesizer: BuiltinSynthesizer, pushes: string[]) {
    const chunks: { audio: Buffer; textEnd: number }[] = [];
    const log: string[] = [];
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const stream = await synthesizer.open(
      { voiceId: 'builtin', model: 'builtin' },
      {
        audio: (audio, textEnd) => chunks.push({ audio, textEnd }),
        done: () => {
          log.push('done');
          settle();
        },
        lost: (reason) => {
          log.push(`lost ${reason}`);
          settle();
        },
      },
    );
    for (const text of pushes) stream.push(text);
    stream.end();
    // Nothing during push(): the audio comes from the voice's thread, later.
    expect(chunks).toEqual([]);
    await settled;
    return { chunks, log };
  }

  it('speaks each push in order, the same audio for the same words whatever was said before, in 60 ms chunks, textEnd at word ends', async () => {
    const first = 'Your table is booked for seven. ';
    const second = 'See you then!';
    const synthesizer = new BuiltinSynthesizer({ voices });
    expect(synthesizer.busy.count).toBe(0);
    const { chunks, log } = await reply(synthesizer, [first, second]);
    expect(log).toEqual(['done']);
    expect(synthesizer.busy.count).toBe(0);
    const audio = Buffer.concat(chunks.map((chunk) => chunk.audio));
    await voices.speak('Something else entirely, to move the engine on.');
    const [a, b] = [await voices.speak(first), await voices.speak(second)];
    expect(audio.equals(Buffer.concat([a.ulaw, b.ulaw]))).toBe(true);
    expect(isSpeech(speechReport(ulawToPcm(audio)))).toBe(true);
    for (const chunk of chunks) expect(chunk.audio.length).toBeLessThanOrEqual(480);
    const ends = chunks.map((chunk) => chunk.textEnd);
    expect(ends).toEqual([...ends].sort((x, y) => x - y));
    expect(ends.at(-1)).toBe(first.length + second.length);
    // Inside a push, textEnd stops only at the start of a word (the words before it said in full).
    const starts = new Set([
      0,
      ...a.words.map((word) => word.textStart),
      first.length,
      ...b.words.map((word) => first.length + word.textStart),
      first.length + second.length,
    ]);
    for (const end of ends) expect(starts.has(end)).toBe(true);
    expect(new Set(ends).size).toBeGreaterThan(4);
  });

  it('keeps at most two of a reply’s sentences at the voice’s thread, and speaks them all in order', async () => {
    let inFlight = 0;
    let most = 0;
    const counting = {
      speak: (text: string, voice?: string) => {
        most = Math.max(most, ++inFlight);
        return voices.speak(text, voice).finally(() => (inFlight -= 1));
      },
    } as unknown as EspeakVoices;
    const sentences = ['One.', 'Two.', 'Three.', 'Four.', 'Five.'];
    const { chunks, log } = await reply(new BuiltinSynthesizer({ voices: counting }), sentences);
    expect(log).toEqual(['done']);
    expect(most).toBe(2);
    const expected = Buffer.concat(await Promise.all(sentences.map(async (text) => (await voices.speak(text)).ulaw)));
    expect(Buffer.concat(chunks.map((chunk) => chunk.audio)).equals(expected)).toBe(true);
  });

  it('ends the reply with lost, not a hang, when its voice cannot speak, and the next reply is spoken', async () => {
    const faulty = new EspeakVoices({ threadUrl: new URL('../support/espeak-crashing-thread.ts', import.meta.url) });
    try {
      const synthesizer = new BuiltinSynthesizer({ voices: faulty });
      const { chunks, log } = await reply(synthesizer, ['POISON pill.', 'Never said.']);
      expect(chunks).toEqual([]);
      expect(log).toEqual([expect.stringMatching(/^lost The builtin voice’s thread stopped \(exit code 3\); the utterance was not spoken$/)]);
      expect(synthesizer.busy.count).toBe(0);
      expect((await reply(synthesizer, ['Hello again.'])).log).toEqual(['done']);
    } finally {
      await faulty.close();
    }
  });
});
