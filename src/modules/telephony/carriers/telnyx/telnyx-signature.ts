import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * How far a webhook's `telnyx-timestamp` may be from our clock, either way: Telnyx's own SDKs refuse
 * a signature past five minutes (telnyx-node `lib/webhooks.ts`, "Allow 5 minutes tolerance"), and
 * developers.telnyx.com (api-fundamentals/webhooks) asks for a replay window on every signed event.
 */
export const TELNYX_SIGNATURE_TOLERANCE_SECONDS = 300;

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): Telnyx publishes the bare 32-byte key, base64. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The account's public key (Mission Control → Keys & Credentials → Public Key, base64), or null when it is not one. */
export function telnyxPublicKey(base64: string): KeyObject | null {
  const raw = Buffer.from(base64.trim(), 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== base64.trim()) return null;
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

/**
 * Whether a webhook is Telnyx's: `telnyx-signature-ed25519` is the account key's Ed25519 signature
 * of `${telnyx-timestamp}|${the raw body}`, and the timestamp (Unix seconds) is within the replay
 * window of `nowSeconds`. Anything malformed is false, never a throw.
 */
export function telnyxSigned(
  publicKey: KeyObject | null,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: string,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): boolean {
  const { timestamp, signature } = headers;
  if (!publicKey || !timestamp || !signature || !/^\d{1,15}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TELNYX_SIGNATURE_TOLERANCE_SECONDS) return false;
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64) return false;
  try {
    return verify(null, Buffer.from(`${timestamp}|${rawBody}`, 'utf8'), publicKey, bytes);
  } catch {
    return false;
  }
}
