// Twilio's TwiML builder (VoiceResponse, with xmlbuilder under it), required on the first document a
// call asks for rather than at start, as the Twilio client is (twilio.carrier.ts): most processes
// answer no call, and the builder is about 30 modules they would otherwise carry from the start.
import { createRequire } from 'node:module';
import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';

let builder: typeof VoiceResponse | undefined;

/** A new, empty TwiML `<Response>`. */
export function newVoiceResponse(): VoiceResponse {
  builder ??= createRequire(import.meta.url)('twilio/lib/twiml/VoiceResponse.js') as typeof VoiceResponse;
  return new builder();
}
