import twilio from 'twilio';
import { CarrierError } from '../../carrier.js';
import { CallStatus } from '../../telephony.enums.js';
import { answeredByOf, callStatusOf, carrierErrorOf, TwilioCarrier } from './twilio.carrier.js';
import { twilioMedia } from './twilio-media.js';

const carrier = new TwilioCarrier('http://127.0.0.1:1');
const account = { connectionId: null, accountSid: `AC${'a'.repeat(32)}`, authToken: '0123456789abcdef0123456789abcdef' };

describe('Twilio status callbacks', () => {
  it.each([
    ['queued', CallStatus.queued],
    ['initiated', CallStatus.queued],
    ['ringing', CallStatus.ringing],
    ['in-progress', CallStatus.in_progress],
    ['completed', CallStatus.completed],
    ['busy', CallStatus.busy],
    ['no-answer', CallStatus.no_answer],
    ['failed', CallStatus.failed],
    ['canceled', CallStatus.canceled],
  ])('CallStatus %s → %s', (twilioStatus, status) => {
    expect(callStatusOf(twilioStatus)).toBe(status);
    expect(carrier.parseStatusCallback({ CallSid: 'CA1', CallStatus: twilioStatus })?.status).toBe(status);
  });

  it.each([
    ['human', 'human'],
    ['machine_start', 'machine'],
    ['machine_end_beep', 'machine'],
    ['machine_end_silence', 'machine'],
    ['machine_end_other', 'machine'],
    ['fax', 'machine'],
    ['unknown', 'unknown'],
  ])('AnsweredBy %s → %s', (value, answeredBy) => {
    expect(answeredByOf(value)).toBe(answeredBy);
  });

  it('reads CallDuration and the RFC 2822 Timestamp of a completed call', () => {
    const event = carrier.parseStatusCallback({
      CallSid: 'CA0123',
      CallStatus: 'completed',
      AnsweredBy: 'machine_end_beep',
      CallDuration: '42',
      Timestamp: 'Wed, 25 Nov 2026 10:11:12 +0000',
    });
    expect(event).toEqual({
      carrierCallId: 'CA0123',
      status: CallStatus.completed,
      answeredBy: 'machine',
      durationSeconds: 42,
      at: new Date('2026-11-25T10:11:12Z'),
    });
  });

  it('is null without a CallSid or with a status Twilio does not send; no AnsweredBy or duration stays null', () => {
    expect(carrier.parseStatusCallback({ CallStatus: 'completed' })).toBeNull();
    expect(carrier.parseStatusCallback({ CallSid: 'CA1', CallStatus: 'exploded' })).toBeNull();
    const before = Date.now();
    const event = carrier.parseStatusCallback({ CallSid: 'CA1', CallStatus: 'ringing', CallDuration: 'x', Timestamp: 'not a date' })!;
    expect([event.answeredBy, event.durationSeconds]).toEqual([null, null]);
    expect(event.at.getTime()).toBeGreaterThanOrEqual(before);
  });
});

describe('Twilio errors', () => {
  const rest = (status: number) => new twilio.RestException({ statusCode: status, body: { code: 20000 + status, message: `status ${status}` } });

  it.each([
    [401, 'credentials'],
    [400, 'rejected'],
    [403, 'rejected'],
    [404, 'rejected'],
    [429, 'unavailable'],
    [500, 'unavailable'],
    [503, 'unavailable'],
  ])('HTTP %s → %s', (status, kind) => {
    const error = carrierErrorOf(rest(status));
    expect(error).toBeInstanceOf(CarrierError);
    expect([error.kind, error.status]).toEqual([kind, status]);
  });

  it('a timeout or a refused connection is unavailable, and the answer never repeats the token', async () => {
    expect(carrierErrorOf(Object.assign(new Error('timeout of 10000ms exceeded'), { code: 'ECONNABORTED' })).kind).toBe('unavailable');
    const refused = await carrier.verifyAccount(account).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CarrierError);
    expect((refused as CarrierError).kind).toBe('unavailable');
    expect((refused as CarrierError).message).not.toContain(account.authToken);
  });
});

describe('Twilio signatures', () => {
  it('accepts the signature Twilio computes over the URL and the fields, and nothing else', () => {
    const url = 'https://gateway.example.com/telephony/twilio/calls/1/status';
    const params = { CallSid: 'CA1', CallStatus: 'ringing' };
    const signature = twilio.getExpectedTwilioSignature(account.authToken, url, params);
    expect(carrier.checkSignature(account, url, params, signature)).toBe(true);
    expect(carrier.checkSignature(account, url, { ...params, CallStatus: 'completed' }, signature)).toBe(false);
    expect(carrier.checkSignature({ ...account, authToken: 'f'.repeat(32) }, url, params, signature)).toBe(false);
    expect(carrier.checkSignature(account, url, params, undefined)).toBe(false);
  });
});

describe('Twilio Media Streams messages', () => {
  it('reads a dtmf message (twilio.com/docs/voice/media-streams/websocket-messages) as the caller’s key, and not one of another track', () => {
    const dtmf = (track: string | undefined, digit: string) =>
      JSON.stringify({ event: 'dtmf', streamSid: 'MZ1', sequenceNumber: '5', dtmf: { ...(track ? { track } : {}), digit } });
    expect(twilioMedia.parse(dtmf('inbound_track', '1'))).toEqual({ kind: 'dtmf', digit: '1' });
    expect(twilioMedia.parse(dtmf(undefined, '#'))).toEqual({ kind: 'dtmf', digit: '#' });
    expect(twilioMedia.parse(dtmf('outbound_track', '1'))).toBeNull();
  });
});
