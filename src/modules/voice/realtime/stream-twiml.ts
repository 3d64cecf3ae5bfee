import VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';

/** The media WebSocket's address for a connection: PUBLIC_URL with its scheme as ws/wss. */
export function mediaStreamUrl(publicUrl: string, connectionId: string): string {
  const base = publicUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//i, (_match, secure: string) => `ws${secure.toLowerCase()}://`);
  return `${base}/telephony/twilio/${connectionId}/media`;
}

/**
 * What an answered speech-to-speech call is told: connect its audio to the gateway's media
 * WebSocket (Twilio Media Streams), naming our call id as a custom parameter so the stream's
 * `start` message carries it back. When the stream ends Twilio asks `/stream-ended` what next:
 * an apology when our side failed the call (the provider dropped), else hang up.
 */
export function renderStreamTwiml({ publicUrl, connectionId, callId }: { publicUrl: string; connectionId: string; callId: string }): string {
  const response = new VoiceResponse();
  const action = `${publicUrl.replace(/\/+$/, '')}/telephony/twilio/${connectionId}/stream-ended?callId=${encodeURIComponent(callId)}`;
  const stream = response.connect({ action, method: 'POST' }).stream({ url: mediaStreamUrl(publicUrl, connectionId) });
  stream.parameter({ name: 'callId', value: callId });
  return response.toString();
}
