import { pcmToUlaw, ulawToPcm } from '../realtime/audio.js';

// The "voice" of the builtin recognizer and synthesizer (builtin-speech.ts): a tiny modem that puts
// text's UTF-8 bytes into dual tones in μ-law 8 kHz, shaped to behave like speech for the pipeline
// (loud enough for a phone-line energy VAD, about as long as the sentence spoken, silence between
// utterances). On a real phone line it is a chirp.
//
// The signal, one segment per text encoded:
//   preamble  SYNC SYNC MARK (96 ms): found by its two tones, then pinned to the sample by correlation
//   data      two symbols per byte, high nibble first; symbol v = LOW[v >> 2] + HIGH[v & 3]
// A symbol is 32 ms (256 samples), so an ASCII character lasts 64 ms. Nothing marks the end: the first
// position that is not a data symbol (silence, noise, the next segment's preamble) ends the segment.
// The decoder needs no frame alignment from its caller: it keeps its own sample count and a short
// ring of past samples, and measures each symbol over its middle 192 samples (Goertzel).

const SAMPLE_RATE = 8000;
const SAMPLES_PER_MS = SAMPLE_RATE / 1000;
/** One symbol: 32 ms, two per byte, so an ASCII character is 64 ms (speech is about 60–70 ms a character). */
const SYMBOL = 256;
/** Samples left out at each edge of a symbol when it is measured (where the tones change). */
const EDGE = 32;
const WINDOW = SYMBOL - 2 * EDGE;
/** Each tone's amplitude: two together give an RMS of 5000 (about −16 dBFS), ten times the VAD's threshold. */
const AMPLITUDE = 5000;
/** Fade-in and fade-out of a segment (3 ms), so it starts and stops without a click. */
const RAMP = 24;
/**
 * Tones are whole multiples of 31.25 Hz (8000 / 256), so each symbol holds whole cycles and ends where
 * it began: symbols join without a jump in the wave, and each is computed once, as μ-law, at start-up.
 * Four low and four high data tones, spaced 156 and 250 Hz (3.75 and 6 Goertzel bins of the 192-sample
 * window); the preamble's tones away from them, so that a block of 8 ms tells them apart.
 */
const STEP = SAMPLE_RATE / SYMBOL;
const LOW = [19, 24, 29, 34].map((k) => k * STEP);
const HIGH = [45, 53, 61, 69].map((k) => k * STEP);
const SYNC = [13, 83].map((k) => k * STEP);
const MARK = [16, 77].map((k) => k * STEP);
const PREAMBLE = 3 * SYMBOL;

/** What the builtin pair's audio lasts: 96 ms of preamble and 64 ms per UTF-8 byte (an ASCII character). */
export const BUILTIN_PREAMBLE_MS = PREAMBLE / SAMPLES_PER_MS;
export const BUILTIN_MS_PER_BYTE = (2 * SYMBOL) / SAMPLES_PER_MS;

/** The audio's length for `text`, in ms. */
export function speechDurationMs(text: string): number {
  const bytes = Buffer.byteLength(text);
  return bytes === 0 ? 0 : BUILTIN_PREAMBLE_MS + bytes * BUILTIN_MS_PER_BYTE;
}

/** One symbol of two tones as μ-law, faded in or out (over RAMP samples) at its start or end. */
function symbolAudio([lowHz, highHz]: readonly number[], fade: 'in' | 'out' | 'none'): Buffer {
  return pcmToUlaw(
    Int16Array.from({ length: SYMBOL }, (_, n) => {
      const ramp = fade === 'in' ? Math.min(1, (n + 1) / RAMP) : fade === 'out' ? Math.min(1, (SYMBOL - n) / RAMP) : 1;
      return Math.round(AMPLITUDE * ramp * (Math.sin((2 * Math.PI * lowHz! * n) / SAMPLE_RATE) + Math.sin((2 * Math.PI * highHz! * n) / SAMPLE_RATE)));
    }),
  );
}

const dataTones = (value: number) => [LOW[value >> 2]!, HIGH[value & 3]!];
const PREAMBLE_AUDIO = Buffer.concat([symbolAudio(SYNC, 'in'), symbolAudio(SYNC, 'none'), symbolAudio(MARK, 'none')]);
const DATA_AUDIO = Array.from({ length: 16 }, (_, value) => symbolAudio(dataTones(value), 'none'));
/** The segment's last symbol, faded out. */
const LAST_DATA_AUDIO = Array.from({ length: 16 }, (_, value) => symbolAudio(dataTones(value), 'out'));

export interface Segment {
  audio: Buffer;
  /** After each character: the byte of `audio` where its sound ends, and the text's length (UTF-16 units) up to it. */
  marks: { end: number; textEnd: number }[];
}

/**
 * A segment: the preamble, then each code point's UTF-8 bytes. A lone surrogate (not valid UTF-16) is
 * sent as U+FFFD, as Buffer.from does; every other character, ASCII or not, comes back as it went.
 */
export function encodeSegment(text: string): Segment {
  const bytes = Buffer.from(text);
  const audio = Buffer.allocUnsafe(PREAMBLE + bytes.length * 2 * SYMBOL);
  PREAMBLE_AUDIO.copy(audio, 0);
  let offset = PREAMBLE;
  for (let i = 0; i < bytes.length; i++) {
    const last = i === bytes.length - 1;
    DATA_AUDIO[bytes[i]! >> 4]!.copy(audio, offset);
    (last ? LAST_DATA_AUDIO : DATA_AUDIO)[bytes[i]! & 15]!.copy(audio, offset + SYMBOL);
    offset += 2 * SYMBOL;
  }
  const marks: Segment['marks'] = [];
  let end = PREAMBLE;
  let textEnd = 0;
  for (const character of text) {
    end += Buffer.byteLength(character) * 2 * SYMBOL;
    textEnd += character.length;
    marks.push({ end, textEnd });
  }
  return { audio, marks };
}

/** μ-law 8 kHz audio that BuiltinRecognizer hears as `text` (empty for empty text). See the signal above. */
export function encodeSpeech(text: string): Buffer {
  return text === '' ? Buffer.alloc(0) : encodeSegment(text).audio;
}

// The decoder.

/** Each μ-law byte's sample. */
const SAMPLE_OF = Float64Array.from(ulawToPcm(Buffer.from(Array.from({ length: 256 }, (_, byte) => byte))));
/** The preamble as it should arrive (through μ-law), to pin a segment's start by correlation. */
const TEMPLATE = Float64Array.from(ulawToPcm(PREAMBLE_AUDIO));
const TEMPLATE_NORM = Math.sqrt(TEMPLATE.reduce((sum, x) => sum + x * x, 0));
/** Past samples kept (512 ms): the furthest back the decoder looks is about 130 ms. */
const RING = 4096;
const MASK = RING - 1;
/** The hunt for a preamble looks at blocks of 8 ms. */
const BLOCK = 64;
/** Blocks of SYNC in a row (32 ms of the preamble's 64) before the correlation is tried. */
const SYNC_BLOCKS = 4;
/** How far either side of the first SYNC block the preamble's first sample may be. */
const SEARCH = 80;
/** Normalized correlation with the preamble needed to take a segment as ours. */
const MIN_CORRELATION = 0.8;
/** Below this RMS (the end-of-speech VAD's threshold) a block or symbol is quiet, never code. */
const QUIET_RMS = 500;
const COEFF = (hz: number) => 2 * Math.cos((2 * Math.PI * hz) / SAMPLE_RATE);
const LOW_COEFF = LOW.map(COEFF);
const HIGH_COEFF = HIGH.map(COEFF);
const SYNC_COEFF = SYNC.map(COEFF);

/** The energy of a tone at `coeff` in `length` samples of the ring from `start`, on the scale of Σx² (Goertzel). */
function toneEnergy(ring: Float64Array, start: number, length: number, coeff: number): number {
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < length; i++) {
    const s = ring[(start + i) & MASK]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return (2 * (s1 * s1 + s2 * s2 - coeff * s1 * s2)) / length;
}

function energy(ring: Float64Array, start: number, length: number): number {
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const x = ring[(start + i) & MASK]!;
    sum += x * x;
  }
  return sum;
}

/** The strongest of a group's tones, if it stands out (four times the next): its index, and its energy. */
function strongest(ring: Float64Array, start: number, coeffs: readonly number[]): [number, number] {
  let best = -1;
  let first = 0;
  let second = 0;
  for (let k = 0; k < coeffs.length; k++) {
    const e = toneEnergy(ring, start, WINDOW, coeffs[k]!);
    if (e > first) {
      second = first;
      first = e;
      best = k;
    } else if (e > second) second = e;
  }
  return first >= 4 * second ? [best, first] : [-1, 0];
}

/** What the decoder hears, positions in samples since the stream began. */
export interface DecoderEvents {
  /** A segment's preamble started at `sample`. */
  segmentStarted(sample: number): void;
  /** A character was decoded; its audio ended at `sample`. */
  character(text: string, sample: number): void;
  /** The segment's code ended at `sample` (the end of its last data symbol). */
  segmentEnded(sample: number): void;
}

type DecoderState = 'hunt' | 'search' | 'data';

/**
 * The streaming decoder: μ-law bytes in, in frames of any size; segments and characters out. Per
 * sample it does a table lookup, a store in the ring and a compare; the measuring (about seven
 * multiply-adds a sample) runs when a block or a symbol is complete, and the correlation (about
 * 125,000 multiply-adds) once per candidate preamble. Nothing is allocated per sample or per frame.
 */
export class SpeechDecoder {
  private readonly ring = new Float64Array(RING);
  /** Samples received. */
  private n = 0;
  /** The sample count at which there is something to measure. */
  private nextAt = BLOCK;
  private state: DecoderState = 'hunt';
  /** hunt: the next block's first sample. */
  private blockStart = 0;
  private syncRun = 0;
  private runStart = 0;
  /** data: the next symbol's first sample. */
  private symbolStart = 0;
  private highNibble = -1;
  private utf8 = new TextDecoder('utf-8');

  constructor(private readonly events: DecoderEvents) {}

  /**
   * The earliest sample where a segment not yet reported could start (−Infinity while a segment is
   * being decoded: its end is not known yet): what the recognizer's silence timers wait for, so they
   * count audio, not arrival.
   */
  get earliestNextStart(): number {
    switch (this.state) {
      case 'data':
        return -Infinity;
      case 'search':
        return this.runStart - SEARCH;
      case 'hunt':
        return (this.syncRun > 0 ? this.runStart : this.blockStart) - SEARCH;
    }
  }

  push(ulaw: Uint8Array): void {
    const ring = this.ring;
    let n = this.n;
    let nextAt = this.nextAt;
    for (let i = 0; i < ulaw.length; i++) {
      ring[n & MASK] = SAMPLE_OF[ulaw[i]!]!;
      n++;
      if (n >= nextAt) {
        this.n = n;
        this.advance();
        nextAt = this.nextAt;
      }
    }
    this.n = n;
  }

  /** Measures whatever the samples received allow, then notes when the next measure is due. */
  private advance(): void {
    for (;;) {
      const due =
        this.state === 'hunt' ? this.blockStart + BLOCK : this.state === 'search' ? this.runStart + SEARCH + PREAMBLE : this.symbolStart + SYMBOL - EDGE;
      if (due > this.n) {
        this.nextAt = due;
        return;
      }
      if (this.state === 'hunt') this.huntBlock();
      else if (this.state === 'search') this.search();
      else this.dataSymbol();
    }
  }

  /** One 8 ms block: is it the preamble's SYNC (both its tones, most of the energy)? */
  private huntBlock(): void {
    const start = this.blockStart;
    this.blockStart += BLOCK;
    const total = energy(this.ring, start, BLOCK);
    let sync = false;
    if (total > QUIET_RMS * QUIET_RMS * BLOCK) {
      const low = toneEnergy(this.ring, start, BLOCK, SYNC_COEFF[0]!);
      const high = toneEnergy(this.ring, start, BLOCK, SYNC_COEFF[1]!);
      sync = low > 0.2 * total && high > 0.2 * total && low + high > 0.6 * total;
    }
    if (!sync) {
      this.syncRun = 0;
      return;
    }
    if (this.syncRun++ === 0) this.runStart = start;
    if (this.syncRun >= SYNC_BLOCKS) this.state = 'search';
  }

  /** Pins the preamble's first sample: the best normalized correlation with it near the SYNC run's start. */
  private search(): void {
    const ring = this.ring;
    const from = Math.max(this.runStart - SEARCH, this.n - RING + 1, 0);
    const to = this.runStart + SEARCH;
    let best = -1;
    let bestAt = 0;
    for (let s = from; s <= to; s++) {
      let dot = 0;
      let power = 0;
      for (let i = 0; i < PREAMBLE; i++) {
        const x = ring[(s + i) & MASK]!;
        dot += x * TEMPLATE[i]!;
        power += x * x;
      }
      const correlation = power > 0 ? dot / (Math.sqrt(power) * TEMPLATE_NORM) : 0;
      if (correlation > best) {
        best = correlation;
        bestAt = s;
      }
    }
    if (best < MIN_CORRELATION) {
      // Not ours (a whistle near the SYNC tones): hunt on from where the blocks stopped.
      this.state = 'hunt';
      this.syncRun = 0;
      return;
    }
    this.state = 'data';
    this.symbolStart = bestAt + PREAMBLE;
    this.highNibble = -1;
    this.utf8 = new TextDecoder('utf-8');
    this.events.segmentStarted(bestAt);
  }

  /** One data symbol: a low and a high tone standing out, together most of the energy; else the segment is over. */
  private dataSymbol(): void {
    const start = this.symbolStart + EDGE;
    const total = energy(this.ring, start, WINDOW);
    let value = -1;
    if (total > QUIET_RMS * QUIET_RMS * WINDOW) {
      const [low, lowEnergy] = strongest(this.ring, start, LOW_COEFF);
      const [high, highEnergy] = strongest(this.ring, start, HIGH_COEFF);
      if (low >= 0 && high >= 0 && lowEnergy + highEnergy > 0.6 * total) value = low * 4 + high;
    }
    if (value < 0) {
      // The segment ended here; what follows may be the next one's preamble, so the hunt starts here.
      this.state = 'hunt';
      this.blockStart = this.symbolStart;
      this.syncRun = 0;
      this.events.segmentEnded(this.symbolStart);
      return;
    }
    this.symbolStart += SYMBOL;
    if (this.highNibble < 0) {
      this.highNibble = value;
      return;
    }
    const byte = (this.highNibble << 4) | value;
    this.highNibble = -1;
    // A character of several bytes comes out with its last byte; one cut short is dropped with the decoder.
    const text = this.utf8.decode(Uint8Array.of(byte), { stream: true });
    if (text !== '') this.events.character(text, this.symbolStart);
  }
}

/** Every segment `ulaw` holds, decoded at once (for tests and the simulator's checks of what the agent said). */
export function decodeSpeech(ulaw: Uint8Array): string[] {
  const segments: string[] = [];
  const decoder = new SpeechDecoder({
    segmentStarted: () => segments.push(''),
    character: (text) => (segments[segments.length - 1] += text),
    segmentEnded: () => undefined,
  });
  decoder.push(ulaw);
  // A segment still open at the end of the audio: silence after it closes it.
  decoder.push(new Uint8Array(SYMBOL).fill(0xff));
  return segments;
}
