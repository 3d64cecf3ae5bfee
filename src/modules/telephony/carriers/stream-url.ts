import { createHash, randomBytes } from 'node:crypto';

/** The media WebSocket's address for a connection of a carrier kind: PUBLIC_URL with its scheme as ws/wss. */
export function mediaStreamUrl(publicUrl: string, connectionId: string, kind: string): string {
  const base = publicUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//i, (_match, secure: string) => `ws${secure.toLowerCase()}://`);
  return `${base}/telephony/${kind}/${connectionId}/media`;
}

/**
 * One call's stream URL: the connection's media address, then the call id and a single-use nonce.
 * The carrier opens it once; the nonce, consumed by the first upgrade, opens that call once and no other.
 * (Twilio's <Stream> URL takes no query string, hence path segments.)
 */
export function callStreamUrl(publicUrl: string, connectionId: string, callId: string, nonce: string, kind: string): string {
  return `${mediaStreamUrl(publicUrl, connectionId, kind)}/${encodeURIComponent(callId)}/${encodeURIComponent(nonce)}`;
}

/** A fresh stream nonce (32 random bytes, base64url) and what is stored of it (its SHA-256, hex). */
export function newStreamNonce(): { nonce: string; hash: string } {
  const nonce = randomBytes(32).toString('base64url');
  return { nonce, hash: streamNonceHash(nonce) };
}

export function streamNonceHash(nonce: string): string {
  return createHash('sha256').update(nonce).digest('hex');
}
