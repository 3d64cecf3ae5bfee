import { KEY_GAP_MS, KEY_TONE_MS, MAX_SEND_DIGITS, PAUSE_MS, sendableDigits } from './dtmf-tones.js';

/** The tool that presses keys on the call (in-band touch tones): a phone menu's "press 2 for billing". */
export const SEND_DIGITS_TOOL = 'send_digits';

/** send_digits as the model is offered it (a CallTool: call-tools.ts lists it with the other built-in ones). */
export const sendDigitsTool = {
  name: SEND_DIGITS_TOOL,
  description:
    'Press keys on the phone keypad, heard by the other side as touch tones: use it to answer a phone menu ("press 2 for billing") ' +
    'or to enter a number you were asked for. Keys 0-9, * and #; w waits half a second between keys. Then listen to what the menu says next.',
  parameters: {
    type: 'object' as const,
    properties: {
      digits: {
        type: 'string',
        description: `The keys to press in order, at most ${MAX_SEND_DIGITS}: 0-9, * and #, and w for a half-second pause (for example "2" or "1234#" or "1w2")`,
      },
    },
    required: ['digits'],
  },
};

/**
 * What send_digits does: the keys to press (each a KEY_TONE_MS tone and a KEY_GAP_MS gap, `w` a
 * PAUSE_MS pause), and what the model is told; a string with anything else presses nothing and
 * tells the model why.
 */
export function sendDigitsEffect(args: Record<string, unknown>): { output: Record<string, unknown>; digits: string | null } {
  const checked = sendableDigits(args.digits);
  if ('error' in checked) return { output: { sent: false, error: checked.error }, digits: null };
  return { output: { sent: true, digits: checked.digits, toneMs: KEY_TONE_MS, gapMs: KEY_GAP_MS, pauseMs: PAUSE_MS }, digits: checked.digits };
}
