import { AgentAudio, CallerAudio, pcmToUlaw, Resampler, ulawToPcm, bytesToPcm, pcmToBytes } from './audio.js';

// The transcoding's measured quality: a tone and a speech-like signal through the paths a Gemini
// call takes (μ-law 8 kHz → PCM → 16 kHz; 24 kHz → 8 kHz → μ-law; and the whole loop back), each
// compared with the same signal computed exactly at the target rate. The SNR floors sit a few dB
// under what was measured; the numbers and the CPU per second of audio are printed for the notes.

type Signal = (t: number) => number;

const tone: Signal = (t) => 8000 * Math.sin(2 * Math.PI * 1000 * t);
/** Voiced speech, roughly: a 150 Hz fundamental with falling harmonics up to 3 kHz, under a syllable envelope. */
const speech: Signal = (t) => {
  let sum = 0;
  for (let harmonic = 1; harmonic * 150 <= 3000; harmonic++) sum += Math.sin(2 * Math.PI * 150 * harmonic * t + harmonic) / harmonic;
  return 5000 * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t)) * sum;
};

function render(signal: Signal, hz: number, seconds: number): Int16Array {
  return Int16Array.from({ length: Math.round(hz * seconds) }, (_, i) => Math.round(signal(i / hz)));
}

/** The SNR (dB) of `got` against `want`, at the delay that fits best, edges (the filters' warm-up) left out. */
function snr(got: Int16Array, want: Int16Array, maxLag = 80): number {
  const skip = 200;
  let best = -Infinity;
  for (let lag = 0; lag <= maxLag; lag++) {
    let signal = 0;
    let noise = 0;
    for (let i = skip; i + lag < got.length && i < want.length - skip; i++) {
      signal += want[i]! ** 2;
      noise += (got[i + lag]! - want[i]!) ** 2;
    }
    best = Math.max(best, 10 * Math.log10(signal / Math.max(noise, 1e-9)));
  }
  return best;
}

/** Feeds the input in 20 ms chunks, as a call does. */
function inFrames(input: Int16Array, hz: number, convert: (chunk: Int16Array) => Int16Array): Int16Array {
  const size = hz / 50;
  const parts: Int16Array[] = [];
  for (let offset = 0; offset < input.length; offset += size) parts.push(convert(input.subarray(offset, offset + size)));
  return Int16Array.from(parts.flatMap((part) => [...part]));
}

const measured: Record<string, string> = {};
afterAll(() =>
  console.log(
    `transcoding quality (SNR) and CPU:\n${Object.entries(measured)
      .map(([name, value]) => `  ${name}: ${value}`)
      .join('\n')}`,
  ),
);

describe('μ-law and PCM16', () => {
  it('decodes and encodes G.711 μ-law, and reads and writes little-endian PCM16', () => {
    expect([...ulawToPcm(Buffer.from([0xff, 0x7f, 0x00, 0x80]))]).toEqual([0, 0, -32124, 32124]);
    expect([...pcmToUlaw(Int16Array.from([0, 32124, -32124]))]).toEqual([0xff, 0x80, 0x00]);
    expect(pcmToBytes(Int16Array.from([1, -2, 32767]))).toEqual(Buffer.from([1, 0, 0xfe, 0xff, 0xff, 0x7f]));
    expect([...bytesToPcm(Buffer.from([1, 0, 0xfe, 0xff, 9]))]).toEqual([1, -2]);
  });

  it('μ-law alone (no resampling) is the floor the paths below are measured against', () => {
    for (const [name, signal] of [
      ['tone 1 kHz', tone],
      ['speech-like', speech],
    ] as const) {
      const exact = render(signal, 8000, 1);
      const db = snr(ulawToPcm(pcmToUlaw(exact)), exact, 0);
      measured[`μ-law alone ${name} (the floor)`] = `${db.toFixed(1)} dB`;
      expect(db).toBeGreaterThan(30);
    }
  });
});

describe('the resampler', () => {
  it.each([
    ['tone 1 kHz', tone],
    ['speech-like', speech],
  ] as const)('caller path (%s): μ-law 8 kHz → PCM → 16 kHz keeps an SNR above 30 dB of the exact 16 kHz signal', (name, signal) => {
    const ulaw = pcmToUlaw(render(signal, 8000, 1));
    const caller = new CallerAudio(16_000);
    const parts: Buffer[] = [];
    for (let offset = 0; offset < ulaw.length; offset += 160) parts.push(caller.convert(ulaw.subarray(offset, offset + 160)));
    const got = bytesToPcm(Buffer.concat(parts));
    expect(got.length).toBe(16_000);
    const db = snr(got, render(signal, 16_000, 1));
    measured[`caller ${name} 8k μ-law → 16k`] = `${db.toFixed(1)} dB`;
    expect(db).toBeGreaterThan(30);
  });

  it.each([
    ['tone 1 kHz', tone],
    ['speech-like', speech],
  ] as const)('agent path (%s): 24 kHz → 8 kHz → μ-law keeps an SNR above 30 dB of the exact 8 kHz signal', (name, signal) => {
    const agent = new AgentAudio(24_000);
    const pcm = pcmToBytes(render(signal, 24_000, 1));
    const parts: Buffer[] = [];
    // Gemini's chunks are not frame-aligned: an odd split of samples still resamples as one stream.
    for (let offset = 0; offset < pcm.length; offset += 2 * 1001) parts.push(agent.convert(pcm.subarray(offset, offset + 2 * 1001)));
    const got = ulawToPcm(Buffer.concat(parts));
    expect(got.length).toBe(8000);
    const db = snr(got, render(signal, 8000, 1));
    measured[`agent ${name} 24k → 8k μ-law`] = `${db.toFixed(1)} dB`;
    expect(db).toBeGreaterThan(30);
  });

  it('the whole loop (8 kHz μ-law → 16 kHz → 24 kHz → 8 kHz μ-law) keeps an SNR above 25 dB of the caller’s decoded audio', () => {
    const original = ulawToPcm(pcmToUlaw(render(speech, 8000, 1)));
    const to16 = new Resampler(8000, 16_000);
    const to24 = new Resampler(16_000, 24_000);
    const to8 = new Resampler(24_000, 8000);
    const back = ulawToPcm(
      pcmToUlaw(
        inFrames(
          inFrames(
            inFrames(original, 8000, (c) => to16.push(c)),
            16_000,
            (c) => to24.push(c),
          ),
          24_000,
          (c) => to8.push(c),
        ),
      ),
    );
    const db = snr(back, original);
    measured['loop speech-like 8k → 16k → 24k → 8k'] = `${db.toFixed(1)} dB`;
    expect(db).toBeGreaterThan(25);
  });

  it('rejects what is above the telephone band when going down (aliasing): a 6 kHz tone at 24 kHz is 40 dB quieter at 8 kHz', () => {
    const input = render((t) => 8000 * Math.sin(2 * Math.PI * 6000 * t), 24_000, 1);
    const out = new Resampler(24_000, 8000).push(input).subarray(200);
    const rms = Math.sqrt(out.reduce((sum, sample) => sum + sample * sample, 0) / out.length);
    expect(20 * Math.log10(rms / (8000 / Math.SQRT2))).toBeLessThan(-40);
  });

  // CPU is measured, not asserted: it is reported here and held to its target by the voice benchmark
  // (`npm run bench -- --only=voice`, CPU per call-second), as every speed is; a bound here failed on a slow machine.
  it('converts a call’s audio both ways at the rates it says, and reports the CPU per second of audio', () => {
    const seconds = 4;
    const ulaw = pcmToUlaw(render(speech, 8000, seconds));
    const pcm24 = pcmToBytes(render(speech, 24_000, seconds));
    const caller = new CallerAudio(16_000);
    const agent = new AgentAudio(24_000);
    let callerBytes = 0;
    let agentBytes = 0;
    let started = process.cpuUsage();
    for (let offset = 0; offset < ulaw.length; offset += 160) callerBytes += caller.convert(ulaw.subarray(offset, offset + 160)).length;
    const callerMicros = process.cpuUsage(started);
    started = process.cpuUsage();
    for (let offset = 0; offset < pcm24.length; offset += 960) agentBytes += agent.convert(pcm24.subarray(offset, offset + 960)).length;
    const agentMicros = process.cpuUsage(started);
    const perSecond = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000 / seconds;
    measured['CPU caller path (8k μ-law → 16k PCM)'] = `${perSecond(callerMicros).toFixed(2)} ms per audio second`;
    measured['CPU agent path (24k PCM → 8k μ-law)'] = `${perSecond(agentMicros).toFixed(2)} ms per audio second`;
    // 8 kHz μ-law (1 byte a sample) in, 16 kHz PCM (2 bytes) out; 24 kHz PCM in, 8 kHz μ-law out: within a filter's delay.
    expect(Math.abs(callerBytes - seconds * 16_000 * 2)).toBeLessThan(16_000 * 2 * 0.01);
    expect(Math.abs(agentBytes - seconds * 8000)).toBeLessThan(8000 * 0.01);
  });
});
