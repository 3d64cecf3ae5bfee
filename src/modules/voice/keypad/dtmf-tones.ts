import type { MediaLink } from '../../telephony/carriers/media-link.js';
import { pcmToUlaw } from '../realtime/audio.js';

// Touch tones the gateway plays into a call's outgoing audio (in-band DTMF), so a key press reaches
// whatever the carrier bridges (a company's phone menu) through the media stream alone. Each key is
// the sum of its row and column frequencies (ITU-T Q.23; Q.24 asks a receiver to take a tone of
// 40 ms or more, a pause of 40 ms or more): KEY_TONE_MS of the pair, then KEY_GAP_MS of silence;
// `w` is a pause of PAUSE_MS. Audio is what the carriers carry: G.711 μ-law, 8 kHz.

const RATE = 8000;
/** One key's tone, and the silence after it. */
export const KEY_TONE_MS = 100;
export const KEY_GAP_MS = 100;
/** The pause character `w` waits this long (as in a phone's dialler). */
export const PAUSE_MS = 500;
/** At most this many characters in one send_digits call (keys and pauses). */
export const MAX_SEND_DIGITS = 32;
/** Each of the pair's amplitude (of 32767): both together stay well under full scale, no twist. */
const AMPLITUDE = 7000;
/** The frames the tones are sent in: 20 ms of μ-law, as carriers send theirs. */
const FRAME_BYTES = 160;

export const DTMF_ROWS = [697, 770, 852, 941] as const;
export const DTMF_COLUMNS = [1209, 1336, 1477, 1633] as const;
/** The keypad, row by row (the fourth column, A–D, is not a key a phone has). */
export const DTMF_KEYPAD = ['123A', '456B', '789C', '*0#D'] as const;

/** The row and column frequencies of one key, or null for a character that is not a key. */
export function dtmfPair(key: string): [number, number] | null {
  for (const [row, keys] of DTMF_KEYPAD.entries()) {
    const column = keys.indexOf(key);
    if (key.length === 1 && column >= 0 && column < 3) return [DTMF_ROWS[row]!, DTMF_COLUMNS[column]!];
  }
  return null;
}

/** What send_digits may press: keys 0–9, * and #, and `w` (a pause). */
const SENDABLE = /^[0-9*#w]+$/;

/** The keys of a send_digits call, or the error the model is told (nothing is pressed then). */
export function sendableDigits(value: unknown): { digits: string } | { error: string } {
  const digits = typeof value === 'string' ? value.trim() : '';
  if (!digits) return { error: 'digits is required: the keys to press, 0-9, * and #, and w for a half-second pause' };
  if (digits.length > MAX_SEND_DIGITS) return { error: `digits may hold at most ${MAX_SEND_DIGITS} characters` };
  if (!SENDABLE.test(digits)) {
    const bad = [...new Set(digits.replace(/[0-9*#w]/g, ''))].join('');
    return { error: `digits may only hold 0-9, * and #, and w for a half-second pause; not ${JSON.stringify(bad)}. Nothing was pressed.` };
  }
  return { digits };
}

/** The tones of `digits` (sendable ones: 0–9 * # w), as μ-law at 8 kHz. */
export function dtmfTones(digits: string): Buffer {
  const toneSamples = (RATE * KEY_TONE_MS) / 1000;
  const gapSamples = (RATE * KEY_GAP_MS) / 1000;
  const pauseSamples = (RATE * PAUSE_MS) / 1000;
  let total = 0;
  for (const key of digits) total += key === 'w' ? pauseSamples : dtmfPair(key) ? toneSamples + gapSamples : 0;
  const samples = new Int16Array(total);
  let at = 0;
  for (const key of digits) {
    if (key === 'w') {
      at += pauseSamples;
      continue;
    }
    const pair = dtmfPair(key);
    if (!pair) continue;
    const [low, high] = pair;
    for (let n = 0; n < toneSamples; n++) {
      const t = n / RATE;
      samples[at + n] = Math.round(AMPLITUDE * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t)));
    }
    at += toneSamples + gapSamples;
  }
  return pcmToUlaw(samples);
}

/** How long the tones of `digits` play, in ms. */
export function dtmfDurationMs(digits: string): number {
  let ms = 0;
  for (const key of digits) ms += key === 'w' ? PAUSE_MS : dtmfPair(key) ? KEY_TONE_MS + KEY_GAP_MS : 0;
  return ms;
}

/** Plays the keys' tones to the other side, after the audio sent before, in 20 ms frames. */
export function pressKeys(link: Pick<MediaLink, 'audio' | 'open'>, digits: string): void {
  const ulaw = dtmfTones(digits);
  for (let at = 0; at < ulaw.length && link.open; at += FRAME_BYTES) link.audio(ulaw.subarray(at, at + FRAME_BYTES).toString('base64'));
}

/** The transcript's line for keys the agent pressed (their keys, not their tones). */
export function agentPressedLine(digits: string): string {
  return `[the agent pressed ${digits}]`;
}
