import alawmulaw from 'alawmulaw';

// The call's audio between Twilio (G.711 μ-law, 8 kHz) and a provider that speaks 16-bit PCM
// (Gemini Live: 16 kHz in, 24 kHz out). μ-law through `alawmulaw` (the maintained G.711 codec the
// tests already used); resampling through a small polyphase windowed-sinc filter of our own: two
// fixed integer ratios (×2, ÷3) need no WASM or native resampler, and the filter's quality is
// measured in audio.test.ts (SNR and CPU per second of audio).

const { mulaw } = alawmulaw;

// G.711 as two tables made once from alawmulaw's own codec (so every value is the codec's): the 256
// samples a μ-law byte decodes to, and the byte each of the 65,536 samples encodes to (64 KB). A
// table read per sample instead of the codec's function call and branches per sample.
const DECODED = mulaw.decode(Uint8Array.from({ length: 256 }, (_, byte) => byte));
const ENCODED = mulaw.encode(Int16Array.from({ length: 65_536 }, (_, i) => i - 32_768));
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** μ-law bytes (base64, as Twilio sends them) → 16-bit samples. */
export function ulawToPcm(ulaw: Buffer): Int16Array {
  const samples = new Int16Array(ulaw.length);
  for (let i = 0; i < ulaw.length; i++) samples[i] = DECODED[ulaw[i]!]!;
  return samples;
}

/** 16-bit samples → μ-law bytes. */
export function pcmToUlaw(samples: Int16Array): Buffer {
  const ulaw = Buffer.allocUnsafe(samples.length);
  for (let i = 0; i < samples.length; i++) ulaw[i] = ENCODED[samples[i]! + 32_768]!;
  return ulaw;
}

/** Little-endian 16-bit PCM bytes (the wire format of Gemini's `audio/pcm`) → samples; an odd last byte is dropped. */
export function bytesToPcm(bytes: Buffer): Int16Array {
  const samples = new Int16Array(bytes.length >> 1);
  if (LITTLE_ENDIAN) new Uint8Array(samples.buffer).set(bytes.subarray(0, samples.length * 2));
  else for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  return samples;
}

/** Samples → little-endian 16-bit PCM bytes. */
export function pcmToBytes(samples: Int16Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
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
  /** The last K-1 inputs, then the chunk being resampled (grown when a chunk is longer than any before). */
  private buffer: Float64Array;
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
    this.buffer = new Float64Array(this.perPhase - 1 + 480);
  }

  /** How late the output is behind the input (the filter's group delay). */
  readonly delaySeconds: number;

  /** Resamples the next chunk of the stream. */
  push(input: Int16Array): Int16Array {
    const K = this.perPhase;
    if (this.buffer.length < K - 1 + input.length) {
      const grown = new Float64Array(K - 1 + input.length);
      grown.set(this.buffer.subarray(0, K - 1));
      this.buffer = grown;
    }
    const buffer = this.buffer;
    for (let i = 0; i < input.length; i++) buffer[K - 1 + i] = input[i]!;
    // Output at upsampled index t needs input floor(t/up) (buffer index K-1 + that) and the K-1 before it:
    // the outputs are the t's from this.t, `down` apart, below input.length·up.
    const end = input.length * this.up;
    const out = new Int16Array(this.t < end ? Math.ceil((end - this.t) / this.down) : 0);
    for (let n = 0; n < out.length; n++) {
      const phase = this.phases[this.t % this.up]!;
      const newest = K - 1 + Math.floor(this.t / this.up);
      let sum = 0;
      for (let k = 0; k < K; k++) sum += phase[k]! * buffer[newest - k]!;
      out[n] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : Math.round(sum);
      this.t += this.down;
    }
    this.t -= end;
    // The last K-1 inputs are the next chunk's history.
    buffer.copyWithin(0, input.length, input.length + K - 1);
    return out;
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
