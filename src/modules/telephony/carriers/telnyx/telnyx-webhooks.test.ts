import { generateKeyPairSync, sign } from 'node:crypto';
import type { CarrierAccount } from '../../carrier.js';
import { CallStatus } from '../../telephony.enums.js';
import { TelnyxCarrier } from './telnyx.carrier.js';
import { texmlCallControl, telnyxWebhooks } from './telnyx-webhooks.js';

// What the webhook routes ask of Telnyx's module: a TeXML callback is Telnyx's when its raw body is
// signed by the account's key within the window; its fields read in the state machine's words.

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const account: CarrierAccount = {
  connectionId: 'c1',
  accountSid: 'acc',
  authToken: 'KEY',
  publicKey: publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64'),
};
const now = 1_800_000_000;
const webhooks = telnyxWebhooks(new TelnyxCarrier('http://127.0.0.1:9'), () => now);
const body = 'AccountSid=acc&CallSid=v3%3Aabc&CallStatus=completed&CallDuration=12&AnsweredBy=machine';
const headers = (timestamp: number, text = body): Record<string, string> => ({
  'telnyx-timestamp': String(timestamp),
  'telnyx-signature-ed25519': sign(null, Buffer.from(`${timestamp}|${text}`), privateKey).toString('base64'),
});
const request = (signed: Record<string, string>, rawBody: string | null = body) => ({
  url: 'https://gw.example/telephony/telnyx/c1/status?callId=x',
  header: (name: string) => signed[name.toLowerCase()],
  fields: Object.fromEntries(new URLSearchParams(body)),
  ...(rawBody !== null ? { rawBody } : {}),
});

describe('Telnyx webhooks', () => {
  it('a callback signed by the account key, now, is Telnyx’s', () => {
    expect(webhooks.verify(request(headers(now)), account)).toBe(true);
  });

  it('refuses an old signature, another body, no raw body, or a connection without its public key', () => {
    expect(webhooks.verify(request(headers(now - 301)), account)).toBe(false);
    expect(webhooks.verify(request(headers(now), `${body}&x=1`), account)).toBe(false);
    expect(webhooks.verify(request(headers(now), null), account)).toBe(false);
    expect(webhooks.verify(request(headers(now)), { ...account, publicKey: null })).toBe(false);
  });

  it('reads status, duration and the machine verdict; sends no idempotency key', () => {
    const fields = Object.fromEntries(new URLSearchParams(body));
    expect(webhooks.status(fields)).toMatchObject({ carrierCallId: 'v3:abc', status: CallStatus.completed, durationSeconds: 12, answeredBy: 'machine' });
    expect(webhooks.answeredBy({ AnsweredBy: 'human' })).toBe('human');
    expect(webhooks.answeredBy({})).toBeNull();
    expect(webhooks.idempotencyKey({ header: () => 'anything' })).toBeNull();
    expect(texmlCallControl.render([{ kind: 'hangup' }], { publicUrl: 'https://gw.example', connectionId: 'c1', callId: 'x' })).toEqual({
      contentType: 'text/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    });
  });

  it('reads a transfer’s <Dial action> report and a warm transfer leg’s end in TeXML’s (TwiML’s) words; anything else is none', () => {
    expect(
      webhooks.dialOutcome!({ CallSid: 'v3:caller', CallStatus: 'in-progress', DialCallSid: 'v3:dialed', DialCallStatus: 'no-answer', DialCallDuration: '0' }),
    ).toEqual({ carrierCallId: 'v3:caller', status: 'no-answer', durationSeconds: 0, callStatus: 'in-progress' });
    expect(webhooks.dialOutcome!({ CallSid: 'v3:caller', DialCallStatus: 'completed' })).toMatchObject({ durationSeconds: null, callStatus: null });
    expect(webhooks.dialOutcome!({ CallSid: 'v3:caller', DialCallStatus: 'ringing' })).toBeNull();
    expect(webhooks.dialOutcome!({ DialCallStatus: 'busy' })).toBeNull();
    expect(webhooks.legOutcome!({ CallSid: 'v3:leg', CallStatus: 'busy', CallDuration: '0' })).toEqual({
      carrierCallId: 'v3:leg',
      status: 'busy',
      durationSeconds: 0,
      callStatus: null,
    });
    expect(webhooks.legOutcome!({ CallSid: 'v3:leg', CallStatus: 'completed', CallDuration: '64' })).toMatchObject({
      status: 'completed',
      durationSeconds: 64,
    });
    // Not ended yet: no outcome.
    expect(webhooks.legOutcome!({ CallSid: 'v3:leg', CallStatus: 'in-progress' })).toBeNull();
  });
});
