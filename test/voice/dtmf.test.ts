import alawmulaw from 'alawmulaw';
import { dtmfTones, KEY_GAP_MS, KEY_TONE_MS, PAUSE_MS, sendableDigits } from '../../src/modules/voice/keypad/dtmf-tones.js';
import { sendDigitsEffect } from '../../src/modules/voice/keypad/send-digits-tool.js';
import { decodeDtmf } from '../support/goertzel.js';
import { tone } from '../support/fake-openai-realtime.js';

// The gateway's touch tones, heard by the tests' Goertzel receiver (test/support/goertzel.ts): every
// key, in order, at its duration, with pauses where `w` says; and the receiver hears no key in a
// single tone, in speech-like audio or in silence (so a test that decodes the gateway's audio can fail).

const BLOCK_MS = 205 / 8;

describe('in-band DTMF', () => {
  it('plays every key of the keypad, in order, each about KEY_TONE_MS long with KEY_GAP_MS between', () => {
    const heard = decodeDtmf(dtmfTones('1234567890*#'));
    expect(heard.map((key) => key.key).join('')).toBe('1234567890*#');
    for (const [index, key] of heard.entries()) {
      // A block straddling an edge is not a key: each tone is heard for its length less up to two blocks.
      expect(key.endMs - key.startMs).toBeGreaterThanOrEqual(KEY_TONE_MS - 2 * BLOCK_MS);
      expect(key.endMs - key.startMs).toBeLessThanOrEqual(KEY_TONE_MS + BLOCK_MS);
      expect(key.startMs).toBeGreaterThanOrEqual(index * (KEY_TONE_MS + KEY_GAP_MS) - BLOCK_MS);
      expect(key.startMs).toBeLessThanOrEqual(index * (KEY_TONE_MS + KEY_GAP_MS) + BLOCK_MS);
    }
  });

  it('w is a pause of PAUSE_MS, and a key repeated is two presses', () => {
    const heard = decodeDtmf(dtmfTones('1w22'));
    expect(heard.map((key) => key.key)).toEqual(['1', '2', '2']);
    expect(heard[1]!.startMs - heard[0]!.startMs).toBeGreaterThanOrEqual(KEY_TONE_MS + KEY_GAP_MS + PAUSE_MS - BLOCK_MS);
    expect(dtmfTones('1w22').length).toBe(8 * (3 * (KEY_TONE_MS + KEY_GAP_MS) + PAUSE_MS));
  });

  it('the receiver hears no key in one tone, in silence or in noise', () => {
    expect(decodeDtmf(tone(440, 500))).toEqual([]);
    expect(decodeDtmf(tone(697, 500))).toEqual([]);
    expect(decodeDtmf(Buffer.alloc(8000, 0xff))).toEqual([]);
    const noise = Int16Array.from({ length: 8000 }, () => Math.round((Math.random() - 0.5) * 20000));
    expect(decodeDtmf(Buffer.from(alawmulaw.mulaw.encode(noise)))).toEqual([]);
  });

  it('send_digits takes 0-9 * # and w only, at most 32: anything else presses nothing and tells the model why', () => {
    expect(sendDigitsEffect({ digits: '12w#' })).toEqual({ output: expect.objectContaining({ sent: true, digits: '12w#' }), digits: '12w#' });
    for (const digits of ['12a', '1 2', 'ABCD', '', 42, null, '1'.repeat(33)]) {
      const effect = sendDigitsEffect({ digits });
      expect(effect.digits).toBeNull();
      expect(effect.output).toEqual({ sent: false, error: expect.any(String) });
    }
    expect(sendableDigits('9x#y')).toEqual({ error: expect.stringContaining('"xy"') });
  });
});
