import { randomBytes } from 'node:crypto';

/** What the caller hears and the carrier does next, carrier-neutral: each carrier module's callControl renders them (TwiML, TeXML), the simulator plays them. */
export type VoiceAction =
  | { kind: 'say'; text: string; voice: string | null }
  /**
   * Listen for speech or keys; `prompt` is spoken while listening. `promptId` goes into the gather's
   * URLs, so each prompt's requests are told apart from a repeat of one (withPromptIds).
   */
  | { kind: 'gather'; prompt: string | null; voice: string | null; promptId?: string }
  /**
   * Ask again for what comes next (the reply route), so the gather's answer goes out at once.
   * `replyId` goes into its URL, so each turn's reply request is told apart from a repeat of one.
   */
  | { kind: 'redirect'; route: 'reply'; replyId?: string }
  /**
   * Bridge the call to a number (or, with `reportTo`, a sip: URI). `reportTo: 'dial'`: the dial's
   * outcome goes to the connection's `/dial` route (a transfer's, transfer-webhooks.rest.ts).
   */
  | { kind: 'dial'; number: string; reportTo?: 'dial' }
  /**
   * The agent speaks speech-to-speech: the call's audio goes to the media stream. `nonce` is the
   * stream URL's single-use nonce, issued (its hash stored on the call) only when the TwiML is sent.
   */
  | { kind: 'stream'; nonce?: string }
  /** Start recording the call from here on (after the callee consented): Twilio's `<Start><Recording>`. */
  | { kind: 'record'; channels: 'mono' | 'dual' }
  /**
   * A warm transfer's room (Twilio: `<Dial><Conference>`): the caller waits in it (hold music) until
   * the person joins from their own leg; either leaving ends it. The caller's reports its end to `/dial`.
   */
  | { kind: 'conference'; room: string; role: 'caller' | 'person' }
  /**
   * Press keys on the call (a batch call's send_digits): the carrier plays their touch tones, Twilio's
   * `<Play digits>` and TeXML's (0-9, * and #; `w` half a second's pause). Only where the carrier's
   * callControl says it `playsDigits`.
   */
  | { kind: 'digits'; digits: string }
  | { kind: 'hangup' };

/**
 * Gives each gather without one a random `promptId`, and each redirect a `replyId`. Applied before
 * actions are kept as a webhook's answer (webhook-replays.ts), so a repeat renders the very same
 * TwiML; twiml.ts applies it to the rest.
 */
export function withPromptIds(actions: VoiceAction[]): VoiceAction[] {
  const id = () => randomBytes(6).toString('base64url');
  return actions.map((action) => {
    if (action.kind === 'gather' && !action.promptId) return { ...action, promptId: id() };
    if (action.kind === 'redirect' && !action.replyId) return { ...action, replyId: id() };
    return action;
  });
}

/** Fixed words of the engine (documented in docs/voice.md). */
export const WORDS = {
  filler: 'One moment.',
  reprompt: 'Sorry, I did not hear you.',
  noInputGoodbye: 'I did not hear anything, so I will end the call now. Goodbye.',
  apology: 'Sorry, something went wrong on our side. We will call you back. Goodbye.',
  turnsGoodbye: 'Thank you for your time. Goodbye.',
  unbound: 'Sorry, this number does not take calls. Goodbye.',
  optOut: 'Understood. We will not call you again. Goodbye.',
  greeting: (name: string) => `Hello, this is ${name}. How can I help you?`,
} as const;
