import { randomBytes } from 'node:crypto';

/** Standard Webhooks' secret form: `whsec_` + base64 of the key (32 random bytes here). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** What reads show of a secret: its last 4 characters. */
export function secretHint(secret: string): string {
  return secret.slice(-4);
}

/** How long the secret before a rotation keeps signing alongside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
