import { generateKeyPairSync, sign } from 'node:crypto';
import { TelnyxWebhook } from 'telnyx/lib/webhooks.js';
import { TELNYX_SIGNATURE_TOLERANCE_SECONDS, telnyxPublicKey, telnyxSigned } from './telnyx-signature.js';

// Telnyx signs `${telnyx-timestamp}|${raw body}` with the account's Ed25519 key (developers.telnyx.com,
// api-reference/callbacks/texml-call-answered: headers telnyx-timestamp, telnyx-signature-ed25519). The
// official SDK's verifier (telnyx-node `lib/webhooks.ts`) judges each case too, so our check and the
// way the tests sign are both held to Telnyx's own code. The SDK reads the clock when it verifies, seconds
// after `now` on a busy machine, so the cases outside the window are a minute outside, not a second.

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const publicBase64 = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
const now = Math.floor(Date.now() / 1000);
const body = 'AccountSid=acc&CallSid=v3%3Aabc&CallStatus=in-progress';
const signed = (timestamp: string, text = body) => sign(null, Buffer.from(`${timestamp}|${text}`), privateKey).toString('base64');

async function sdkAccepts(timestamp: string, signature: string, text = body): Promise<boolean> {
  try {
    await new TelnyxWebhook(publicBase64).verify(text, { 'telnyx-timestamp': timestamp, 'telnyx-signature-ed25519': signature });
    return true;
  } catch {
    return false;
  }
}

describe('Telnyx webhook signatures', () => {
  const key = telnyxPublicKey(publicBase64);

  it('reads the 32-byte base64 key Telnyx publishes, and nothing else', () => {
    expect(key).not.toBeNull();
    expect(telnyxPublicKey('not a key')).toBeNull();
    expect(telnyxPublicKey(Buffer.alloc(31).toString('base64'))).toBeNull();
  });

  const cases: [string, () => { timestamp: string; signature: string; text?: string }, boolean][] = [
    ['a fresh signature of this body', () => ({ timestamp: String(now), signature: signed(String(now)) }), true],
    ['a body changed after signing', () => ({ timestamp: String(now), signature: signed(String(now)), text: `${body}&Extra=1` }), false],
    ['another timestamp than the one signed', () => ({ timestamp: String(now + 1), signature: signed(String(now)) }), false],
    [
      'a signature older than the replay window',
      () => ({ timestamp: String(now - TELNYX_SIGNATURE_TOLERANCE_SECONDS - 60), signature: signed(String(now - TELNYX_SIGNATURE_TOLERANCE_SECONDS - 60)) }),
      false,
    ],
    [
      'one from too far ahead',
      () => ({ timestamp: String(now + TELNYX_SIGNATURE_TOLERANCE_SECONDS + 60), signature: signed(String(now + TELNYX_SIGNATURE_TOLERANCE_SECONDS + 60)) }),
      false,
    ],
    [
      'one a minute inside the window',
      () => ({ timestamp: String(now - TELNYX_SIGNATURE_TOLERANCE_SECONDS + 60), signature: signed(String(now - TELNYX_SIGNATURE_TOLERANCE_SECONDS + 60)) }),
      true,
    ],
    ['a timestamp that is not a number', () => ({ timestamp: '12e9', signature: signed('12e9') }), false],
    ['a truncated signature', () => ({ timestamp: String(now), signature: signed(String(now)).slice(0, 40) }), false],
  ];

  it.each(cases)('%s: as the official SDK judges it', async (_name, make, expected) => {
    const { timestamp, signature, text = body } = make();
    expect(telnyxSigned(key, { timestamp, signature }, text, now)).toBe(expected);
    expect(await sdkAccepts(timestamp, signature, text)).toBe(expected);
  });

  it('another account’s key opens nothing', () => {
    const other = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
    expect(telnyxSigned(telnyxPublicKey(other), { timestamp: String(now), signature: signed(String(now)) }, body, now)).toBe(false);
    expect(telnyxSigned(key, { timestamp: undefined, signature: signed(String(now)) }, body, now)).toBe(false);
  });
});
