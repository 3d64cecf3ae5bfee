import { randomBytes } from 'node:crypto';
import { CredentialsError, open, seal } from './credentials.js';

const key = randomBytes(32);
const token = '0123456789abcdef0123456789abcdef';

describe('credentials sealing (AES-256-GCM)', () => {
  it('opens what it sealed, in the v1:<iv>:<tag>:<ciphertext> form, without the token in clear', () => {
    const sealed = seal(token, key);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(token);
    const [, iv, tag] = sealed.split(':');
    expect(Buffer.from(iv!, 'base64')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64')).toHaveLength(16);
    expect(open(sealed, key)).toBe(token);
  });

  it('uses a fresh IV each time: the same token seals to different texts', () => {
    const first = seal(token, key);
    const second = seal(token, key);
    expect(first).not.toBe(second);
    expect(first.split(':')[1]).not.toBe(second.split(':')[1]);
  });

  it('refuses another key', () => {
    expect(() => open(seal(token, key), randomBytes(32))).toThrow(CredentialsError);
  });

  it.each([
    ['ciphertext', 3],
    ['tag', 2],
    ['iv', 1],
  ])('refuses a changed %s', (_part, index) => {
    const parts = seal(token, key).split(':');
    const bytes = Buffer.from(parts[index]!, 'base64');
    bytes[0] = bytes[0]! ^ 0x01;
    parts[index] = bytes.toString('base64');
    expect(() => open(parts.join(':'), key)).toThrow(CredentialsError);
  });

  it('refuses what is not a sealed value, and a key that is not 32 bytes', () => {
    expect(() => open(token, key)).toThrow(CredentialsError);
    expect(() => open(`v2:${seal(token, key).slice(3)}`, key)).toThrow(CredentialsError);
    expect(() => seal(token, randomBytes(16))).toThrow(CredentialsError);
  });
});
