import alawmulaw from 'alawmulaw';

// The call's audio between Twilio (G.711 μ-law, 8 kHz) and a provider that speaks 16-bit PCM
// (Gemini Live: 16 kHz in, 24 kHz out). μ-law through `alawmulaw` (the maintained G.711 codec the
// tests already used); resampling through a small polyphase windowed-sinc filter of our own: two
// fixed integer ratios (×2, ÷3) need no WASM or native resampler, and the filter's quality is
// measured in audio.test.ts (SNR and CPU per second of audio).

const { mulaw } = alawmulaw;

/** μ-law bytes (base64, as Twilio sends them) → 16-bit samples. */
export function ulawToPcm(ulaw: Buffer): Int16Array {
  return mulaw.decode(new Uint8Array(ulaw.buffer, ulaw.byteOffset, ulaw.byteLength));
}

/** 16-bit samples → μ-law bytes. */
export function pcmToUlaw(samples: Int16Array): Buffer {
  return Buffer.from(mulaw.encode(samples));
}

/** Little-endian 16-bit PCM bytes (the wire format of Gemini's `audio/pcm`) → samples; an odd last byte is dropped. */
export function bytesToPcm(bytes: Buffer): Int16Array {
  const samples = new Int16Array(bytes.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  return samples;
}

/** Samples → little-endian 16-bit PCM bytes. */
export function pcmToBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i]!, i * 2);
  return bytes;
}

/** A windowed-sinc low-pass (Blackman window), `taps` long, cutting at `cutoff` (a fraction of the sample rate). */
function lowPass(taps: number, cutoff: number): Float64Array {
  const h = new Float64Array(taps);
  const middle = (taps - 1) / 2;
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - middle;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (taps - 1));
    h[i] = sinc * window;
    sum += h[i]!;
  }
  for (let i = 0; i < taps; i++) h[i]! /= sum;
  return h;
}

/**
 * A streaming rational resampler: up by `up`, low-pass, down by `down`, computed polyphase (only
 * the outputs kept, only the non-zero inputs). It keeps its history between chunks, so a call's
 * 20 ms frames resample as one stream. `cutoffHz` sits below the lower of the two Nyquist rates so
 * that neither images (going up) nor aliases (going down) reach the telephone band.
 */
export class Resampler {
  private readonly up: number;
  private readonly down: number;
  private readonly phases: Float64Array[];
  private readonly perPhase: number;
  private history: Float64Array;
  /** The next output's index on the upsampled time line, relative to the first input of the next chunk. */
  private t = 0;

  constructor(
    readonly fromHz: number,
    readonly toHz: number,
    tapsPerPhase = 48,
  ) {
    const divisor = gcd(fromHz, toHz);
    this.up = toHz / divisor;
    this.down = fromHz / divisor;
    // An odd, symmetric filter about `tapsPerPhase` taps per input or output sample, whose delay is a
    // whole number of input and of output samples (a multiple of up·down on the upsampled time line).
    const delay = this.up * this.down * Math.ceil((tapsPerPhase * Math.max(this.up, this.down)) / 2 / (this.up * this.down));
    const h = lowPass(2 * delay + 1, (Math.min(fromHz, toHz) * 0.46) / (fromHz * this.up));
    this.perPhase = Math.ceil(h.length / this.up);
    this.delaySeconds = delay / (fromHz * this.up);
    // Phase p holds h[p], h[p + up], h[p + 2·up]... scaled by `up` (zero-stuffing divided the gain by it).
    this.phases = Array.from({ length: this.up }, (_, p) => Float64Array.from({ length: this.perPhase }, (_, k) => (h[p + k * this.up] ?? 0) * this.up));
    this.history = new Float64Array(this.perPhase - 1);
  }

  /** How late the output is behind the input (the filter's group delay). */
  readonly delaySeconds: number;

  /** Resamples the next chunk of the stream. */
  push(input: Int16Array): Int16Array {
    const K = this.perPhase;
    const buffer = new Float64Array(K - 1 + input.length);
    buffer.set(this.history);
    for (let i = 0; i < input.length; i++) buffer[K - 1 + i] = input[i]!;
    const out: number[] = [];
    // Output at upsampled index t needs input floor(t/up) (buffer index K-1 + that) and the K-1 before it.
    while (Math.floor(this.t / this.up) < input.length) {
      const phase = this.phases[this.t % this.up]!;
      const newest = K - 1 + Math.floor(this.t / this.up);
      let sum = 0;
      for (let k = 0; k < K; k++) sum += phase[k]! * buffer[newest - k]!;
      out.push(sum > 32767 ? 32767 : sum < -32768 ? -32768 : Math.round(sum));
      this.t += this.down;
    }
    this.t -= input.length * this.up;
    this.history = buffer.slice(buffer.length - (K - 1));
    return Int16Array.from(out);
  }
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Caller audio for a provider that listens at `toHz`: Twilio's μ-law frames in, PCM16 (little-endian) out. */
export class CallerAudio {
  private readonly resampler: Resampler;
  constructor(toHz: number) {
    this.resampler = new Resampler(8000, toHz);
  }
  convert(ulaw: Buffer): Buffer {
    return pcmToBytes(this.resampler.push(ulawToPcm(ulaw)));
  }
}

/** Agent audio from a provider that speaks at `fromHz`: PCM16 (little-endian) in, μ-law at 8 kHz for Twilio out. */
export class AgentAudio {
  private readonly resampler: Resampler;
  constructor(fromHz: number) {
    this.resampler = new Resampler(fromHz, 8000);
  }
  convert(pcm: Buffer): Buffer {
    return pcmToUlaw(this.resampler.push(bytesToPcm(pcm)));
  }
}
