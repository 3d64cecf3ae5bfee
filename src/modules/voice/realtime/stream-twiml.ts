import { createHash, randomBytes } from 'node:crypto';
import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import { newVoiceResponse } from '../../telephony/voice-response.js';

/** The media WebSocket's address for a connection: PUBLIC_URL with its scheme as ws/wss. */
export function mediaStreamUrl(publicUrl: string, connectionId: string): string {
  const base = publicUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//i, (_match, secure: string) => `ws${secure.toLowerCase()}://`);
  return `${base}/telephony/twilio/${connectionId}/media`;
}

/**
 * One call's stream URL: the connection's media address, then the call id and a single-use nonce.
 * Twilio signs the upgrade over this whole URL, so its signature opens that call once, and no other.
 * (A <Stream> URL takes no query string, hence path segments.)
 */
export function callStreamUrl(publicUrl: string, connectionId: string, callId: string, nonce: string): string {
  return `${mediaStreamUrl(publicUrl, connectionId)}/${encodeURIComponent(callId)}/${encodeURIComponent(nonce)}`;
}

/** A fresh stream nonce (32 random bytes, base64url) and what is stored of it (its SHA-256, hex). */
export function newStreamNonce(): { nonce: string; hash: string } {
  const nonce = randomBytes(32).toString('base64url');
  return { nonce, hash: streamNonceHash(nonce) };
}

export function streamNonceHash(nonce: string): string {
  return createHash('sha256').update(nonce).digest('hex');
}

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
  const stream = response.connect({ action, method: 'POST' }).stream({ url: callStreamUrl(publicUrl, connectionId, callId, nonce) });
  stream.parameter({ name: 'callId', value: callId });
  return response.toString();
}
