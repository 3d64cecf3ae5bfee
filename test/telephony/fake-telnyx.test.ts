import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Telnyx from 'telnyx';
import { CarrierError, type CarrierAccount } from '../../src/modules/telephony/carrier.js';
import { CallStatus } from '../../src/modules/telephony/telephony.enums.js';
import { TelnyxCarrier } from '../../src/modules/telephony/carriers/telnyx/telnyx.carrier.js';
import { telnyxPublicKey, telnyxSigned } from '../../src/modules/telephony/carriers/telnyx/telnyx-signature.js';
import { renderTexml } from '../../src/modules/telephony/carriers/telnyx/texml.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';

// The loopback Telnyx, driven by the official `telnyx` client through TelnyxCarrier: what the
// gateway sends is checked against Telnyx's published OpenAPI description (test/support/
// telnyx-texml.schemas.md), and the callbacks it signs open with the account's public key. A
// receiver on loopback answers the TeXML the gateway would render, and notes what was signed.

describe('the loopback Telnyx, through the official client', () => {
  let fake: FakeTelnyx;
  let receiver: Server;
  let base: string;
  const received: { path: string; signed: boolean; fields: Record<string, string> }[] = [];
  const carrier = () => new TelnyxCarrier(fake.url);
  const account = (): CarrierAccount => ({ connectionId: null, accountSid: fake.accountSid, authToken: fake.apiKey, applicationId: '2000000000000000001' });

  beforeAll(async () => {
    fake = await startFakeTelnyx();
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const signed = telnyxSigned(
        telnyxPublicKey(fake.publicKey),
        { timestamp: req.headers['telnyx-timestamp'] as string, signature: req.headers['telnyx-signature-ed25519'] as string },
        body,
      );
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      received.push({ path, signed, fields: Object.fromEntries(new URLSearchParams(body)) });
      const context = { publicUrl: base, connectionId: 'c1', callId: 'call-1' };
      const texml = path.endsWith('/answer')
        ? renderTexml([{ kind: 'gather', prompt: 'What can I do for you?', voice: null }], context)
        : path.endsWith('/gather')
          ? renderTexml([{ kind: 'say', text: 'Booked for Monday.', voice: null }, { kind: 'hangup' }], context)
          : '';
      res.writeHead(200, { 'content-type': texml ? 'text/xml' : 'text/plain' }).end(texml);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('places a call as Telnyx publishes it, tells its life in signed callbacks, and follows the TeXML answered', async () => {
    fake.script(() => ({ outcome: 'answered', turns: ['Monday at nine'], durationSeconds: 7 }));
    const placed = await carrier().placeCall(account(), {
      callId: 'call-1',
      to: '+15550001111',
      from: '+15550002222',
      statusCallbackUrl: `${base}/telephony/telnyx/c1/status?callId=call-1`,
      answerUrl: `${base}/telephony/telnyx/c1/answer?callId=call-1`,
      machineDetection: true,
      attempt: 1,
    });
    // The published answer names no call: the first callback does.
    expect(placed).toEqual({ carrierCallId: null });
    await fake.settled();
    expect(fake.refusals()).toEqual([]);
    const [call] = fake.calls();
    expect(call!.heard).toEqual(['What can I do for you?', 'Booked for Monday.']);
    expect(call!.hungUp).toBe(true);
    expect(received.every((request) => request.signed)).toBe(true);
    expect(received.map((request) => `${request.path} ${request.fields.CallStatus}`)).toEqual([
      '/telephony/telnyx/c1/status initiated',
      '/telephony/telnyx/c1/status ringing',
      '/telephony/telnyx/c1/status in-progress',
      '/telephony/telnyx/c1/answer in-progress',
      '/telephony/telnyx/c1/gather in-progress',
      '/telephony/telnyx/c1/status completed',
    ]);
    expect(received[4]!.fields.SpeechResult).toBe('Monday at nine');
    expect(received[3]!.fields.AnsweredBy).toBe('human');
    const completed = carrier().parseStatusCallback(received[5]!.fields);
    expect(completed).toMatchObject({ carrierCallId: call!.sid, status: CallStatus.completed, durationSeconds: 7 });

    // Fetched and found as the call ended.
    const fetched = await carrier().fetchCall(account(), {
      callId: 'call-1',
      carrierCallId: call!.sid,
      to: call!.to,
      from: call!.from,
      attempt: 1,
      queuedAt: new Date(Date.now() - 1000),
    });
    expect(fetched).toMatchObject({ carrierCallId: call!.sid, status: CallStatus.completed, answeredBy: 'human', durationSeconds: 7 });
    const found = await carrier().findCall(account(), {
      callId: 'call-1',
      carrierCallId: null,
      to: call!.to,
      from: call!.from,
      attempt: 1,
      queuedAt: new Date(Date.now() - 5000),
    });
    expect(found?.carrierCallId).toBe(call!.sid);
    expect(await carrier().fetchCall(account(), { callId: 'x', carrierCallId: 'v3:none', to: '+1', from: null, attempt: 1, queuedAt: new Date() })).toBeNull();
    await carrier().verifyAccount(account());
    // Only the unknown call was refused (404): nothing the gateway sent broke Telnyx's schema.
    expect(fake.refusals().map((refusal) => refusal.status)).toEqual([404]);
  });

  it('places a warm transfer’s leg with its TeXML (played, not fetched) and Timeout, finds it, and ends it ringing (canceled) or answered (completed)', async () => {
    let ringOut = () => undefined as void;
    let hangUp = () => undefined as void;
    fake.script((to) =>
      to === '+15550003333'
        ? { outcome: 'answered', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) }
        : { outcome: 'answered', holdUntil: new Promise<void>((resolve) => (hangUp = resolve)) },
    );
    const refusedBefore = fake.refusals().length;
    const document = {
      contentType: 'text/xml',
      body: renderTexml([{ kind: 'say', text: 'A caller for you.', voice: null }], { publicUrl: base, connectionId: 'c1', callId: 'call-1' }),
    };
    const leg = (to: string, timeoutSeconds: number) =>
      carrier().dialLeg(account(), {
        to,
        from: '+15550002222',
        document,
        timeoutSeconds,
        statusCallbackUrl: `${base}/telephony/telnyx/c1/transfer-leg?callId=call-1`,
      });
    const ringing = await leg('+15550003333', 30);
    const ringingCall = fake.calls().find((call) => call.sid === ringing.carrierCallId)!;
    expect(ringingCall).toMatchObject({ to: '+15550003333', texml: document.body, timeoutSeconds: 30, statusCallbackEvents: ['completed'] });
    // Past the published 5–120 s: asked within them.
    const answered = await leg('+15550004444', 600);
    const answeredCall = fake.calls().find((call) => call.sid === answered.carrierCallId)!;
    expect(answeredCall.timeoutSeconds).toBe(120);
    await new Promise<void>((resolve) => {
      const check = () => (answeredCall.heard.length > 0 && ringingCall.status === 'ringing' ? resolve() : setTimeout(check, 5));
      check();
    });
    // The answered leg heard its own TeXML, never asked a URL.
    expect(answeredCall.documents).toEqual([{ url: 'InitiateCall', status: 200, texml: document.body }]);
    expect(answeredCall.heard).toEqual(['A caller for you.']);

    await carrier().endLeg(account(), ringing.carrierCallId);
    await carrier().endLeg(account(), answered.carrierCallId);
    hangUp();
    ringOut();
    await fake.settled();
    expect(ringingCall.updates).toEqual([{ Status: 'completed' }]);
    expect(ringingCall.status).toBe('canceled');
    expect(answeredCall.updates).toEqual([{ Status: 'completed' }]);
    expect(answeredCall.status).toBe('completed');
    // Each leg's one status callback, its end.
    const legEnds = received.filter((request) => request.path.endsWith('/transfer-leg')).map((request) => [request.fields.CallSid, request.fields.CallStatus]);
    expect(legEnds).toEqual(
      expect.arrayContaining([
        [ringing.carrierCallId, 'canceled'],
        [answered.carrierCallId, 'completed'],
      ]),
    );
    expect(legEnds).toHaveLength(2);
    // A leg already ended is left as it is; one Telnyx has not is no error.
    await carrier().endLeg(account(), ringing.carrierCallId);
    expect(ringingCall.updates).toHaveLength(1);
    await carrier().endLeg(account(), 'v3:none');
    expect(
      fake
        .refusals()
        .slice(refusedBefore)
        .map((refusal) => refusal.status),
    ).toEqual([404]);
    // UpdateCall's Status is published with one value: another is refused.
    const client = new Telnyx({ apiKey: fake.apiKey, baseURL: fake.url, maxRetries: 0 });
    await expect(client.texml.accounts.calls.update(answered.carrierCallId, { account_sid: fake.accountSid, Status: 'canceled' })).rejects.toMatchObject({
      status: 422,
    });
  });

  it('refuses what Telnyx does not publish, as Telnyx would: an unknown field, a missing one, a wrong event word', async () => {
    const client = new Telnyx({ apiKey: fake.apiKey, baseURL: fake.url, maxRetries: 0 });
    const before = fake.refusals().length;
    const refused = (body: Record<string, unknown>) =>
      client.texml.accounts.calls.calls(fake.accountSid, { body: body as never }).then(
        () => null,
        (error: { status?: number }) => error.status,
      );
    expect(await refused({ ApplicationSid: '1', To: '+15550001111', From: '+15550002222', Url: `${base}/a`, Colour: 'blue' })).toBe(422);
    expect(await refused({ To: '+15550001111', From: '+15550002222', Url: `${base}/a` })).toBe(422);
    expect(await refused({ ApplicationSid: '1', To: '+15550001111', From: '+15550002222', StatusCallbackEvent: 'initiated hungup' })).toBe(422);
    const schemaRefusals = fake
      .refusals()
      .slice(before)
      .filter((refusal) => refusal.status === 422);
    expect(schemaRefusals).toHaveLength(3);
    expect(schemaRefusals[0]!.problem).toMatch(/Colour/);
    expect(schemaRefusals[1]!.problem).toMatch(/ApplicationSid/);
  });

  it('answers faults in the carrier-neutral words the runner acts on', async () => {
    const place = () =>
      carrier()
        .placeCall(account(), {
          callId: 'c',
          to: '+15550001111',
          from: '+15550002222',
          statusCallbackUrl: `${base}/s`,
          answerUrl: `${base}/a`,
          machineDetection: false,
          attempt: 1,
        })
        .then(
          () => null,
          (error: unknown) => (error instanceof CarrierError ? error.kind : 'other'),
        );
    fake.faults({ createStatus: 503 });
    expect(await place()).toBe('unavailable');
    fake.faults({ createStatus: 429 });
    expect(await place()).toBe('unavailable');
    fake.faults({ rejectCredentials: true });
    expect(await place()).toBe('credentials');
    await expect(carrier().verifyAccount(account())).rejects.toMatchObject({ kind: 'credentials' });
    fake.faults({});
    await expect(
      carrier().placeCall(
        { ...account(), applicationId: null },
        { callId: 'c', to: '+1', from: null, statusCallbackUrl: 's', answerUrl: 'a', machineDetection: false, attempt: 1 },
      ),
    ).rejects.toMatchObject({ kind: 'rejected' });
    await expect(carrier().verifyAccount({ ...account(), accountSid: 'not-this-account' })).rejects.toMatchObject({ kind: 'rejected' });
  });

  it('signs with the account key only: a forger’s callback does not open', async () => {
    fake.faults({ forgeSignatures: true });
    const body = 'CallSid=v3%3Ax&CallStatus=completed';
    const headers = fake.signedHeaders(body);
    fake.faults({});
    expect(
      telnyxSigned(telnyxPublicKey(fake.publicKey), { timestamp: headers['telnyx-timestamp'], signature: headers['telnyx-signature-ed25519'] }, body),
    ).toBe(false);
    const good = fake.signedHeaders(body);
    expect(telnyxSigned(telnyxPublicKey(fake.publicKey), { timestamp: good['telnyx-timestamp'], signature: good['telnyx-signature-ed25519'] }, body)).toBe(
      true,
    );
  });
});
