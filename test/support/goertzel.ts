import alawmulaw from 'alawmulaw';

// A DTMF receiver for the tests: Goertzel's algorithm (one DFT bin per frequency) over 8 kHz μ-law
// audio, in blocks of 205 samples (about 25.6 ms: the classic block, whose bins fall near the eight
// ITU-T Q.23 frequencies). A block holds a key when its strongest row and strongest column together
// carry most of its energy, each a fair share (a single tone, speech-like audio or silence do not);
// consecutive blocks of one key are one press. It knows nothing of the gateway's generator.

const { mulaw } = alawmulaw;
const RATE = 8000;
const BLOCK = 205;
const ROWS = [697, 770, 852, 941];
const COLUMNS = [1209, 1336, 1477, 1633];
const KEYS = ['123A', '456B', '789C', '*0#D'];
/** Below this mean square a block is silence. */
const MIN_POWER = 1e4;

/** One key heard: its key, and where its tone began and ended in the audio (ms). */
export interface HeardKey {
  key: string;
  startMs: number;
  endMs: number;
}

/** The power of one frequency in a block, as a share of the block's energy (a lone sine at that frequency: about 1). */
function share(block: Float64Array, hz: number, energy: number): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let previous = 0;
  let before = 0;
  for (const sample of block) {
    const current = sample + coefficient * previous - before;
    before = previous;
    previous = current;
  }
  const power = previous * previous + before * before - coefficient * previous * before;
  return (2 * power) / (block.length * energy);
}

function strongest(block: Float64Array, frequencies: number[], energy: number): { index: number; share: number } {
  let best = { index: 0, share: -1 };
  for (const [index, hz] of frequencies.entries()) {
    const value = share(block, hz, energy);
    if (value > best.share) best = { index, share: value };
  }
  return best;
}

/** The key one block holds, or null. */
function blockKey(block: Float64Array): string | null {
  let energy = 0;
  for (const sample of block) energy += sample * sample;
  if (energy / block.length < MIN_POWER) return null;
  const row = strongest(block, ROWS, energy);
  const column = strongest(block, COLUMNS, energy);
  if (row.share < 0.25 || column.share < 0.25 || row.share + column.share < 0.7) return null;
  return KEYS[row.index]![column.index]!;
}

/** The keys in μ-law audio, in order: a run of blocks of one key is one press; a block of anything else ends it. */
export function decodeDtmf(ulaw: Buffer): HeardKey[] {
  const samples = mulaw.decode(new Uint8Array(ulaw.buffer, ulaw.byteOffset, ulaw.byteLength));
  const heard: HeardKey[] = [];
  let previous: string | null = null;
  for (let at = 0; at + BLOCK <= samples.length; at += BLOCK) {
    const key = blockKey(Float64Array.from(samples.subarray(at, at + BLOCK)));
    const endMs = ((at + BLOCK) / RATE) * 1000;
    if (key && key === previous) heard[heard.length - 1]!.endMs = endMs;
    else if (key) heard.push({ key, startMs: (at / RATE) * 1000, endMs });
    previous = key;
  }
  return heard;
}
