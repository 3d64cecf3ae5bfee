import { hash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 40 base62 characters from the CSPRNG: about 238 bits. */
export function randomKeyPart(length = 40): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}

/** Keys are stored and looked up only by this hash of their full value (one-shot: no Hash object per request). */
export function hashKey(fullKey: string): string {
  return hash('sha256', fullKey, 'hex');
}
