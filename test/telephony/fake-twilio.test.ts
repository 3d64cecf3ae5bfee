import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { CarrierError } from '../../src/modules/telephony/carrier.js';
import { CallStatus } from '../../src/modules/telephony/telephony.enums.js';
import { TwilioCarrier } from '../../src/modules/telephony/carriers/twilio/twilio.carrier.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { eventually } from '../helpers/eventually.js';

// The fake against the real SDK (through TwilioCarrier, pointed at it as TWILIO_API_BASE_URL does),
// and its callbacks against the SDK's own signature check.

interface Received {
  path: string;
  params: Record<string, string>;
  signature: string | undefined;
}

let fake: FakeTwilio;
let hooks: Server;
let hooksUrl: string;
let received: Received[];
let carrier: TwilioCarrier;

beforeAll(async () => {
  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        params: Object.fromEntries(new URLSearchParams(body)),
        signature: req.headers['x-twilio-signature'] as string | undefined,
      });
      res.writeHead(200, { 'content-type': req.url?.includes('answer') ? 'text/xml' : 'text/plain' });
      res.end(req.url?.includes('answer') ? '<Response><Say>Hello</Say></Response>' : '');
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => hooks.close(resolve)));

beforeEach(async () => {
  received = [];
  fake = await startFakeTwilio();
  carrier = new TwilioCarrier(fake.url);
});
afterEach(() => fake.close());

const account = () => ({ connectionId: null, accountSid: fake.accountSid, authToken: fake.authToken });
const request = (to: string, machineDetection = true) => ({
  callId: 'c1',
  to,
  from: '+14155550100',
  statusCallbackUrl: `${hooksUrl}/status`,
  answerUrl: `${hooksUrl}/answer`,
  machineDetection,
  attempt: 1,
});
const statuses = () => received.filter((r) => r.path === '/status').map((r) => r.params.CallStatus);

it('the SDK creates a call form-encoded with Basic auth; the fake plays initiated → ringing → in-progress → completed, signed as Twilio signs', async () => {
  fake.script(() => ({ outcome: 'answered', durationSeconds: 42 }));
  const { carrierCallId } = await carrier.placeCall(account(), request('+14155550111'));
  expect(carrierCallId).toMatch(/^CA[0-9a-f]{32}$/);
  const create = fake.requests().find((r) => r.method === 'POST')!;
  expect(create.path).toBe(`/2010-04-01/Accounts/${fake.accountSid}/Calls.json`);
  expect(create.headers['content-type']).toContain('application/x-www-form-urlencoded');
  expect(create.form).toMatchObject({
    To: '+14155550111',
    From: '+14155550100',
    Url: `${hooksUrl}/answer`,
    StatusCallback: `${hooksUrl}/status`,
    StatusCallbackMethod: 'POST',
    MachineDetection: 'Enable',
  });
  await fake.settled();
  expect(statuses()).toEqual(['initiated', 'ringing', 'in-progress', 'completed']);
  for (const hit of received) {
    expect(twilio.validateRequest(fake.authToken, hit.signature!, `${hooksUrl}${hit.path}`, hit.params)).toBe(true);
    expect(twilio.validateRequest('f'.repeat(32), hit.signature!, `${hooksUrl}${hit.path}`, hit.params)).toBe(false);
  }
  const completed = received.find((r) => r.params.CallStatus === 'completed')!.params;
  expect(completed).toMatchObject({
    AccountSid: fake.accountSid,
    CallSid: carrierCallId,
    Direction: 'outbound-api',
    ApiVersion: '2010-04-01',
    CallbackSource: 'call-progress-events',
    CallDuration: '42',
    AnsweredBy: 'human',
  });
  expect(carrier.parseStatusCallback(completed)).toMatchObject({ status: CallStatus.completed, answeredBy: 'human', durationSeconds: 42 });
  // The answer URL was asked (signed POST) and its TwiML recorded.
  expect(received.filter((r) => r.path === '/answer')).toHaveLength(1);
  expect(fake.calls()[0]!.twiml).toBe('<Response><Say>Hello</Say></Response>');
});

it.each([
  ['busy', ['initiated', 'ringing', 'busy']],
  ['no-answer', ['initiated', 'ringing', 'no-answer']],
  ['failed', ['initiated', 'failed']],
  ['voicemail', ['initiated', 'ringing', 'in-progress', 'completed']],
] as const)('outcome %s: callbacks in Twilio’s order, no in-progress unless answered', async (outcome, expected) => {
  fake.script(() => ({ outcome }));
  await carrier.placeCall(account(), request('+14155550112'));
  await fake.settled();
  expect(statuses()).toEqual(expected);
  if (outcome === 'voicemail') expect(received.at(-1)!.params.AnsweredBy).toBe('machine_end_beep');
});

describe('asynchronous machine detection and live-call updates', () => {
  const updateUrl = (sid: string) => `${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Calls/${sid}.json`;
  const post = (url: string, form: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(form).toString(),
    });

  it('asks the answer URL at once, posts each verdict signed to AsyncAmdStatusCallback, and plays the TwiML an update gives', async () => {
    let update: Promise<void> = Promise.resolve();
    fake.script(() => ({ outcome: 'voicemail', answeredBy: ['machine_start', 'machine_end_beep'], detectionMs: 2500 }));
    const { carrierCallId } = await carrier.placeCall(account(), { ...request('+14155550120'), machineVerdictUrl: `${hooksUrl}/amd` });
    const create = fake.requests().find((r) => r.method === 'POST')!;
    expect(create.form).toMatchObject({
      MachineDetection: 'DetectMessageEnd',
      MachineDetectionTimeout: '30',
      AsyncAmd: 'true',
      AsyncAmdStatusCallback: `${hooksUrl}/amd`,
      AsyncAmdStatusCallbackMethod: 'POST',
    });
    // The double's hooks answer 200 at once: the update is made when the end-of-greeting verdict arrives.
    const hook = hooks.listeners('request')[0] as (...args: unknown[]) => void;
    hooks.removeAllListeners('request');
    hooks.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/amd') {
        let body = '';
        req.on('data', (chunk) => (body += chunk));
        req.on('end', () => {
          const params = Object.fromEntries(new URLSearchParams(body));
          received.push({ path: '/amd', params, signature: req.headers['x-twilio-signature'] as string | undefined });
          if (params.AnsweredBy === 'machine_end_beep') {
            update = carrier.updateCall(account(), carrierCallId, { body: '<Response><Say>Please call us back.</Say><Hangup/></Response>' });
            void update.then(() => res.end());
          } else res.end();
        });
        return;
      }
      hook(req, res);
    });
    try {
      await fake.settled();
    } finally {
      hooks.removeAllListeners('request');
      hooks.on('request', hook);
    }
    await update;
    const verdicts = received.filter((r) => r.path === '/amd');
    expect(verdicts.map((r) => r.params)).toEqual([
      { AccountSid: fake.accountSid, CallSid: carrierCallId, AnsweredBy: 'machine_start', MachineDetectionDuration: '2500' },
      { AccountSid: fake.accountSid, CallSid: carrierCallId, AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '2500' },
    ]);
    for (const hit of verdicts) expect(twilio.validateRequest(fake.authToken, hit.signature!, `${hooksUrl}/amd`, hit.params)).toBe(true);
    // The answer request did not wait for detection: it carried no AnsweredBy.
    expect(received.find((r) => r.path === '/answer')!.params.AnsweredBy).toBeUndefined();
    const [call] = fake.calls();
    expect(call!.updates).toEqual([{ Twiml: '<Response><Say>Please call us back.</Say><Hangup/></Response>' }]);
    expect(call!.heard).toEqual(['Please call us back.']);
    expect(call!.hungUp).toBe(true);
    expect(received.find((r) => r.params.CallStatus === 'completed')!.params.AnsweredBy).toBe('machine_end_beep');
  });

  it('redirects a live call it is not following at once (waiting in a conference room): new Twiml plays, a Url is fetched signed; a hang-up ends the call', async () => {
    const creates = `${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Calls.json`;
    const inRoom = (room: string) => `<Response><Dial><Conference startConferenceOnEnter="false">${room}</Conference></Dial></Response>`;
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.script(() => ({ outcome: 'answered', stepMs: 5, holdUntil: held }));
    try {
      const twiml = (await (await post(creates, { To: '+14155550140', From: '+14155550100', Twiml: inRoom('room-a') })).json()) as { sid: string };
      const url = (await (await post(creates, { To: '+14155550141', From: '+14155550100', Twiml: inRoom('room-b') })).json()) as { sid: string };
      const waiting = (sid: string, room: string) =>
        eventually(
          () => fake.room(room)?.participants ?? [],
          (participants) => participants.includes(sid),
          { what: `${sid} in ${room}` },
        );
      await Promise.all([waiting(twiml.sid, 'room-a'), waiting(url.sid, 'room-b')]);
      // Twiml: played now, out of the room; its <Hangup/> ends the call though the script still holds it.
      await carrier.updateCall(account(), twiml.sid, { body: '<Response><Say>Back with you.</Say><Hangup/></Response>' });
      // Url: fetched with the call's fields, signed, and its answer followed.
      expect((await post(updateUrl(url.sid), { Url: `${hooksUrl}/answer-again` })).status).toBe(200);
      const calls = () => fake.calls().filter((call) => [twiml.sid, url.sid].includes(call.sid));
      await eventually(calls, (both) => both.every((call) => call.heard.length > 0), { what: 'both calls redirected' });
      const [first, second] = [fake.calls().find((call) => call.sid === twiml.sid)!, fake.calls().find((call) => call.sid === url.sid)!];
      expect(first.heard).toEqual(['Back with you.']);
      expect(first.hungUp).toBe(true);
      expect(fake.room('room-a')!.participants).toEqual([]);
      expect(second.heard).toEqual(['Hello']);
      expect(fake.room('room-b')!.participants).toEqual([]);
      const fetched = received.find((r) => r.path === '/answer-again')!;
      expect(fetched.params).toMatchObject({ CallSid: url.sid, CallStatus: 'in-progress', To: '+14155550141' });
      expect(twilio.validateRequest(fake.authToken, fetched.signature!, `${hooksUrl}/answer-again`, fetched.params)).toBe(true);
      // The hung-up call ends on its own; the other stays held until its script lets it go.
      await eventually(
        () => first.status,
        (status) => status === 'completed',
        { what: 'the hung-up call ended' },
      );
      expect(second.status).toBe('in-progress');
    } finally {
      release();
    }
    await fake.settled();
    expect(fake.calls().map((call) => call.status)).toEqual(['completed', 'completed']);
    expect(fake.twimlProblems()).toEqual([]);
  });

  it('refuses what Twilio does not publish: unknown or malformed detection and update fields, and an update of an ended call', async () => {
    const creates = `${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Calls.json`;
    const base = { To: '+14155550121', From: '+14155550100', Url: `${hooksUrl}/answer` };
    expect((await post(creates, { ...base, MachineDetection: 'Sometimes' })).status).toBe(400);
    expect((await post(creates, { ...base, MachineDetection: 'Enable', AsyncAmd: 'maybe' })).status).toBe(400);
    expect((await post(creates, { ...base, MachineDetection: 'Enable', AsyncAmdStatusCallbackMethod: 'PUT' })).status).toBe(400);
    expect((await post(creates, { ...base, MachineDetection: 'Enable', AsyncAmdCallback: 'x' })).status).toBe(400);
    fake.script(() => ({ outcome: 'busy' }));
    const { carrierCallId } = await carrier.placeCall(account(), request('+14155550122'));
    await fake.settled();
    const refused = async (form: Record<string, string>) => (await (await post(updateUrl(carrierCallId), form)).json()) as { code: number };
    expect((await refused({ Twiml: '<Response/>', Foo: '1' })).code).toBe(20001);
    expect((await refused({ Twiml: '<Response/>', Url: 'https://example.com/x' })).code).toBe(20001);
    expect((await refused({ Status: 'paused' })).code).toBe(20001);
    expect((await refused({})).code).toBe(20001);
    // A valid update of a call that ended: Twilio's 21220, which the SDK reads as a refusal.
    await expect(carrier.updateCall(account(), carrierCallId, { body: '<Response><Hangup/></Response>' })).rejects.toMatchObject({
      kind: 'rejected',
      status: 400,
    });
    expect(fake.calls()[0]!.updates).toEqual([]);
  });

  it('an adopted call plays a transfer’s TwiML: the line heard, the number dialled, the <Dial action> report posted signed; bad TwiML and faults refused', async () => {
    const sid = `CA${'a'.repeat(32)}`;
    const call = fake.adopt({ sid, to: '+14155550131', from: '+14155550100', script: { outcome: 'answered', dial: { status: 'busy' } } });
    // TwiML Twilio would not run: an attribute <Dial> does not have, a <Number> that is not a number.
    await expect(carrier.updateCall(account(), sid, { body: '<Response><Dial actionUrl="x">+14155550100</Dial></Response>' })).rejects.toMatchObject({
      kind: 'rejected',
    });
    await expect(carrier.updateCall(account(), sid, { body: '<Response><Dial><Number>front desk</Number></Dial></Response>' })).rejects.toMatchObject({
      kind: 'rejected',
    });
    expect(fake.twimlProblems()).toEqual(['<Dial> has no attribute actionUrl', '<Number>front desk</Number> is not E.164']);
    fake.faults({ updateStatus: 503 });
    await expect(carrier.updateCall(account(), sid, { body: '<Response><Hangup/></Response>' })).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
    fake.faults({});
    expect(call.updates).toEqual([]);
    const action = `${hooksUrl}/dial?callId=c1`;
    await carrier.updateCall(account(), sid, {
      body: `<Response><Say>Connecting you.</Say><Dial action="${action}" method="POST"><Sip>sip:front@pbx.example.com</Sip></Dial></Response>`,
    });
    await fake.settled();
    expect(call.heard).toEqual(['Connecting you.']);
    expect(call.transfers).toEqual(['sip:front@pbx.example.com']);
    const report = received.find((r) => r.path === '/dial?callId=c1')!;
    expect(report.params).toMatchObject({
      CallSid: sid,
      DialCallStatus: 'busy',
      DialCallDuration: '0',
      DialCallSid: expect.stringMatching(/^CA[0-9a-f]{32}$/),
    });
    expect(twilio.validateRequest(fake.authToken, report.signature!, action, report.params)).toBe(true);
    expect(call.dialReports).toEqual([{ url: action, params: report.params, status: 200 }]);
  });
});

it('fetches a call (and null for an unknown sid), and finds the newest call to a number since a date', async () => {
  fake.script(() => ({ outcome: 'busy' }));
  const queuedAt = new Date();
  const { carrierCallId } = await carrier.placeCall(account(), request('+14155550113'));
  await fake.settled();
  const known = { callId: 'c1', carrierCallId, to: '+14155550113', from: '+14155550100', attempt: 1, queuedAt };
  expect(await carrier.fetchCall(account(), known)).toMatchObject({ carrierCallId, status: CallStatus.busy });
  expect(await carrier.fetchCall(account(), { ...known, carrierCallId: `CA${'0'.repeat(32)}` })).toBeNull();
  expect(await carrier.findCall(account(), { ...known, carrierCallId: null })).toMatchObject({ carrierCallId, status: CallStatus.busy });
  expect(await carrier.findCall(account(), { ...known, to: '+14155550199', carrierCallId: null })).toBeNull();
  const list = fake.requests().filter((r) => r.method === 'GET' && r.path.endsWith('/Calls.json'));
  expect(list[0]!.query).toMatchObject({ To: '+14155550113', From: '+14155550100' });
  expect(list[0]!.query['StartTime>']).toBeDefined();
});

it('faults: dropped callbacks still leave the state readable; duplicates; reordering', async () => {
  fake.faults({ drop: true });
  fake.script(() => ({ outcome: 'answered', durationSeconds: 5 }));
  const { carrierCallId } = await carrier.placeCall(account(), request('+14155550114', false));
  await fake.settled();
  expect(statuses()).toEqual([]);
  expect(await carrier.fetchCall(account(), { callId: 'c', carrierCallId, to: '+14155550114', from: null, attempt: 1, queuedAt: new Date() })).toMatchObject({
    status: CallStatus.completed,
    durationSeconds: 5,
    answeredBy: null,
  });

  fake.faults({ duplicate: true, reorder: true });
  received = [];
  await carrier.placeCall(account(), request('+14155550115'));
  await fake.settled();
  expect(statuses()).toEqual(['completed', 'completed', 'in-progress', 'in-progress', 'ringing', 'ringing', 'initiated', 'initiated']);
});

it('faults: credentials rejected (401), 5xx, a cap on creates per second (429)', async () => {
  await expect(carrier.verifyAccount(account())).resolves.toBeUndefined();
  await expect(carrier.verifyAccount({ ...account(), authToken: '0'.repeat(32) })).rejects.toMatchObject({ kind: 'credentials', status: 401 });
  fake.faults({ rejectCredentials: true });
  await expect(carrier.verifyAccount(account())).rejects.toMatchObject({ kind: 'credentials' });
  fake.faults({ createStatus: 503 });
  await expect(carrier.placeCall(account(), request('+14155550116'))).rejects.toMatchObject({ kind: 'unavailable', status: 503 });
  fake.faults({ maxCallsPerSecond: 1 });
  await carrier.placeCall(account(), request('+14155550117'));
  const second = await carrier.placeCall(account(), request('+14155550118')).catch((error: unknown) => error);
  expect(second).toBeInstanceOf(CarrierError);
  expect(second).toMatchObject({ kind: 'unavailable', status: 429 });
  await fake.settled();
});

describe('recordings at the fake', () => {
  const form = (fields: Record<string, string | string[]>) => {
    const body = new URLSearchParams({ To: '+14155550123', From: '+14155550100', Url: `${hooksUrl}/answer` });
    for (const [key, value] of Object.entries(fields)) for (const each of [value].flat()) body.append(key, each);
    return body;
  };
  const create = (body: URLSearchParams) =>
    fetch(`${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Calls.json`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body,
    });

  it.each([
    ['RecordingChannels=stereo', { Record: 'true', RecordingChannels: 'stereo' }, 'RecordingChannels'],
    ['Record=yes', { Record: 'yes' }, 'Record'],
    ['an event Twilio does not send', { Record: 'true', RecordingStatusCallbackEvent: ['completed', 'started'] }, 'RecordingStatusCallbackEvent'],
    ['RecordingStatusCallbackMethod=PUT', { Record: 'true', RecordingStatusCallbackMethod: 'PUT' }, 'RecordingStatusCallbackMethod'],
    ['a Record parameter Twilio does not publish', { Record: 'true', RecordingFormat: 'mp3' }, 'RecordingFormat'],
  ])('refuses a CreateCall with %s (400 naming it), as Twilio’s published schema does', async (_label, fields, name) => {
    const res = await create(form(fields));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(name);
    expect(fake.calls()).toHaveLength(0);
  });

  it('takes the SDK’s Record parameters, records the answered call, and serves and deletes its audio behind Basic auth', async () => {
    fake.script(() => ({ outcome: 'answered', durationSeconds: 3, stepMs: 1 }));
    await carrier.placeCall(account(), { ...request('+14155550123'), recording: { channels: 'dual', statusCallbackUrl: `${hooksUrl}/recording` } });
    await fake.settled();
    const [recording] = fake.recordings();
    expect(recording).toMatchObject({
      source: 'OutboundAPI',
      channels: 'dual',
      status: 'completed',
      durationSeconds: 3,
      statusCallbackEvents: ['in-progress', 'completed', 'absent'],
    });
    const reports = received.filter((each) => each.path === '/recording');
    expect(reports.map((each) => each.params.RecordingStatus)).toEqual(['in-progress', 'completed']);
    for (const report of reports) expect(twilio.validateRequest(fake.authToken, report.signature!, `${hooksUrl}/recording`, report.params)).toBe(true);
    expect(carrier.parseRecordingCallback(reports[1]!.params)).toMatchObject({
      carrierRecordingId: recording!.sid,
      status: 'completed',
      durationSeconds: 3,
      channels: 'dual',
      errorText: null,
    });
    const wrongToken = await carrier.openRecording({ ...account(), authToken: 'wrong' }, recording!.sid, 'wav', 'dual').catch((error: unknown) => error);
    expect(wrongToken).toBeInstanceOf(CarrierError);
    expect((wrongToken as CarrierError).kind).toBe('credentials');
    const media = await carrier.openRecording(account(), recording!.sid, 'wav', 'dual');
    expect(Buffer.from(await new Response(media!.body).arrayBuffer()).readUInt16LE(22)).toBe(2);
    expect(await carrier.deleteRecording(account(), recording!.sid)).toBe('deleted');
    expect(await carrier.deleteRecording(account(), recording!.sid)).toBe('missing');
    expect(await carrier.openRecording(account(), recording!.sid, 'mp3', 'dual')).toBeNull();
  });
});
