import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import { newVoiceResponse } from './voice-response.js';
import { callStreamUrl } from '../stream-url.js';

/**
 * What an answered speech-to-speech call is told: connect its audio to the gateway's media
 * WebSocket (Twilio Media Streams) at the call's own URL (its id and a single-use nonce), naming our
 * call id as a custom parameter so the stream's `start` message carries it back. When the stream
 * ends Twilio asks `/stream-ended` what next: an apology when our side failed the call (the
 * provider dropped), else hang up.
 */
export function renderStreamTwiml(
  { publicUrl, connectionId, callId, nonce }: { publicUrl: string; connectionId: string; callId: string; nonce: string },
  /** Verbs before the stream (a recording started once consent was given). */
  prelude?: (response: VoiceResponse) => void,
): string {
  const response = newVoiceResponse();
  prelude?.(response);
  const action = `${publicUrl.replace(/\/+$/, '')}/telephony/twilio/${connectionId}/stream-ended?callId=${encodeURIComponent(callId)}`;
  const stream = response.connect({ action, method: 'POST' }).stream({ url: callStreamUrl(publicUrl, connectionId, callId, nonce, 'twilio') });
  stream.parameter({ name: 'callId', value: callId });
  return response.toString();
}
