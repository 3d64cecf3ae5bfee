import alawmulaw from 'alawmulaw';
import { EndOfSpeechDetector, SPEECH_END_MS, SPEECH_ONSET_MS, SPEECH_RMS } from './end-of-speech.js';

// The gateway's own end-of-speech signal (for Gemini Live): the cases it must tell apart, and its
// CPU per second of call audio (it runs on every frame), printed for the notes.

const { mulaw } = alawmulaw;
const FRAME = 160;

/** μ-law 20 ms frames of `ms` of audio whose samples come from `sample(i)`. */
function frames(ms: number, sample: (i: number) => number): Buffer[] {
  const pcm = Int16Array.from({ length: (ms * 8000) / 1000 }, (_, i) => Math.round(sample(i)));
  const ulaw = Buffer.from(mulaw.encode(pcm));
  const out: Buffer[] = [];
  for (let offset = 0; offset < ulaw.length; offset += FRAME) out.push(ulaw.subarray(offset, offset + FRAME));
  return out;
}

/** A voiced tone under a syllable envelope (RMS about 2,000), as the tests' callers speak. */
const speech = (ms: number) => frames(ms, (i) => 5000 * (0.6 + 0.4 * Math.sin((2 * Math.PI * 4 * i) / 8000)) * Math.sin((2 * Math.PI * 180 * i) / 8000));
/** Noise of a given RMS (uniform: RMS = amplitude / √3). */
const noise = (ms: number, rms: number) => frames(ms, () => (Math.random() * 2 - 1) * rms * Math.sqrt(3));

function ends(audio: Buffer[]): { count: number; atFrame: number[] } {
  const atFrame: number[] = [];
  let index = 0;
  const detector = new EndOfSpeechDetector(() => atFrame.push(index));
  for (; index < audio.length; index++) detector.push(audio[index]!);
  return { count: atFrame.length, atFrame };
}

describe('EndOfSpeechDetector', () => {
  it('ends speech once, SPEECH_END_MS after it stops', () => {
    const audio = [...speech(800), ...noise(1000, 20)];
    const { count, atFrame } = ends(audio);
    expect(count).toBe(1);
    // 40 frames of speech, then the 15th quiet frame (300 ms) is the end.
    expect(atFrame[0]).toBe(800 / 20 + SPEECH_END_MS / 20 - 1);
  });

  it('ends each turn of speech once, and a pause shorter than SPEECH_END_MS does not end it', () => {
    const audio = [...speech(600), ...noise(SPEECH_END_MS - 100, 20), ...speech(400), ...noise(600, 20), ...speech(500), ...noise(600, 20)];
    expect(ends(audio).count).toBe(2);
  });

  it('hears no speech in silence, in noise under the threshold, or in a click shorter than SPEECH_ONSET_MS', () => {
    expect(ends(noise(3000, 0)).count).toBe(0);
    expect(ends(noise(3000, SPEECH_RMS * 0.7)).count).toBe(0);
    expect(ends([...noise(500, 20), ...speech(SPEECH_ONSET_MS - 20), ...noise(1000, 20)]).count).toBe(0);
  });

  it('costs little CPU per second of call audio (base64 decoding included, as the bridge does it)', () => {
    const seconds = 60;
    const cycle = [...speech(800), ...noise(2200, 20)].map((frame) => frame.toString('base64'));
    const payloads = Array.from({ length: seconds * 50 }, (_, i) => cycle[i % cycle.length]!);
    let count = 0;
    const detector = new EndOfSpeechDetector(() => count++);
    const started = process.cpuUsage();
    for (const payload of payloads) detector.push(Buffer.from(payload, 'base64'));
    const used = process.cpuUsage(started);
    const msPerSecond = (used.user + used.system) / 1000 / seconds;
    console.log(`end-of-speech detector: ${msPerSecond.toFixed(3)} ms CPU per second of call audio (${seconds} s in 20 ms frames, ${count} ends)`);
    expect(count).toBe(seconds / 3);
    // The transcoding it sits beside costs about 17 ms per second: this must stay a small part of that.
    expect(msPerSecond).toBeLessThan(2);
  });
});
