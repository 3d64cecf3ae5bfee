import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that does not open: another key, a changed byte, or not a sealed value at all. */
export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

function assertKey(key: Buffer): void {
  if (key.length !== 32) throw new CredentialsError('The credentials key must be 32 bytes (AES-256)');
}

/**
 * Seals a secret (a carrier auth token, a webhook signing secret) with AES-256-GCM under `key`: a fresh random 12-byte IV each
 * time, so the same token never seals to the same text. Answers `v1:<iv>:<tag>:<ciphertext>`, base64.
 */
export function seal(plaintext: string, key: Buffer): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64'), tag.toString('base64'), ciphertext.toString('base64')].join(':');
}

/** Opens what `seal` made with the same key; throws CredentialsError when the key or any byte differs. */
export function open(sealed: string, key: Buffer): string {
  assertKey(key);
  const parts = sealed.split(':');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new CredentialsError('Not a sealed credential (expected v1:<iv>:<tag>:<ciphertext>)');
  const [, ivText, tagText, dataText] = parts as [string, string, string, string];
  const iv = Buffer.from(ivText, 'base64');
  const tag = Buffer.from(tagText, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new CredentialsError('A sealed credential with a malformed IV or tag');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new CredentialsError('The sealed credential does not open with CREDENTIALS_KEY (another key, or it was altered)');
  }
}
