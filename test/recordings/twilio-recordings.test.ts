import { randomUUID } from 'node:crypto';
import twilio from 'twilio';
import { postAsTwilio } from '../support/twilio-webhook.js';
import { recordingRetentionHook } from '../../src/modules/recordings/recording-retention.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { TWILIO_SPEC_SOURCE } from '../support/twilio-recordings-spec.js';
import { startTwilioApp, twilioCampaign, waitForExecution } from '../telephony/fixtures.js';
import { download } from './fixtures.js';
import { DeleteCarrierConnectionKeepingDocument } from '../generated/graphql.js';
import { testRunner } from '../runner/fixtures.js';

// Recordings through Twilio (the loopback double): Record on the call, <Start><Recording> after
// consent, signed recording callbacks, the audio streamed with the connection's credentials, and
// the carrier's faults.

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTwilioApp(fake);
  acme = await app.organization('Acme');
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});
afterEach(() => fake.faults({}));

const headers = () => ({ 'x-api-key': acme.apiKey });

/** A Twilio campaign with these program settings, run to its end; its calls as REST lists them. */
async function run(contacts: number, program: Record<string, unknown>, script: (phones: string[]) => void) {
  const campaign = await twilioCampaign(acme, fake, { contacts, program });
  script(campaign.phones);
  const runner = testRunner(app, { intervalMs: 20 });
  runner.start();
  try {
    await waitForExecution(acme, campaign.executionId, (execution) => execution.status === 'completed');
    await fake.settled();
  } finally {
    await runner.stop();
  }
  const calls = (await acme.rest.get(`/api/calls?executionId=${campaign.executionId}&limit=100`)).body.data as Record<string, any>[];
  return { campaign, calls };
}

const creates = () => fake.requests().filter((request) => request.method === 'POST' && /\/Calls\.json$/.test(request.path));

describe('Record on the call', () => {
  let result: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    result = await run(3, { recording: { enabled: true, channels: 'dual' } }, (phones) => {
      fake.script((to) => ({ outcome: to === phones[1] ? 'busy' : 'answered', durationSeconds: 42, stepMs: 5 }));
    });
  });

  it('asks Twilio to record each call with parameters its published CreateCall schema accepts', () => {
    const forms = creates().filter((request) => result.calls.some((call) => call.to === request.form.To));
    expect(forms).toHaveLength(3);
    for (const { form, query } of forms) {
      expect(query).toEqual({});
      expect(form).toMatchObject({ Record: 'true', RecordingChannels: 'dual', RecordingStatusCallbackMethod: 'POST' });
      const call = result.calls.find((each) => each.to === form.To)!;
      expect(form.RecordingStatusCallback).toBe(`${app.baseUrl}/telephony/twilio/${result.campaign.connectionId}/recording?callId=${call.id}`);
    }
    expect(TWILIO_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('keeps a recording per answered call, with Twilio’s id and none of its URL; the busy call has none', async () => {
    for (const call of result.calls) {
      const atTwilio = fake.recordings().filter((item) => item.callSid === call.carrierCallId);
      if (call.outcome !== 'answered') {
        expect([call.outcome, call.recording, atTwilio]).toEqual(['busy', null, []]);
        continue;
      }
      expect(atTwilio).toHaveLength(1);
      expect(atTwilio[0]!.source).toBe('OutboundAPI');
      expect(call.recording).toMatchObject({
        carrier: 'twilio',
        carrierRecordingId: atTwilio[0]!.sid,
        status: 'completed',
        channels: 'dual',
        durationSeconds: 42,
        errorText: null,
        deletedAt: null,
      });
      const [row] = await app.sql<Record<string, unknown>>('select * from call_recordings where call_id = ?', [call.id]);
      expect(JSON.stringify(row)).not.toContain('http');
      expect(JSON.stringify(row)).not.toContain(fake.authToken);
    }
  });

  it('streams the audio from Twilio with the account’s credentials: WAV with both channels, or MP3 by Accept or format', async () => {
    const call = result.calls.find((each) => each.outcome === 'answered')!;
    const sid = call.recording.carrierRecordingId as string;
    const wav = await download(app.baseUrl, `/api/calls/${call.id}/recording`, headers());
    expect([wav.status, wav.type]).toEqual([200, 'audio/wav']);
    expect(wav.body.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.body.readUInt16LE(22)).toBe(2);
    const mp3 = await download(app.baseUrl, `/api/calls/${call.id}/recording`, { ...headers(), accept: 'audio/mpeg' });
    expect([mp3.status, mp3.type, mp3.body.subarray(0, 3).toString('latin1')]).toEqual([200, 'audio/mpeg', 'ID3']);
    const byQuery = await download(app.baseUrl, `/api/calls/${call.id}/recording?format=mp3`, { ...headers(), accept: 'audio/wav' });
    expect(byQuery.type).toBe('audio/mpeg');
    const fetched = fake.requests().filter((request) => request.path.includes(`/Recordings/${sid}.`));
    expect(fetched.map((request) => [request.method, request.path.split('.').pop(), request.query.RequestedChannels])).toEqual([
      ['GET', 'wav', '2'],
      ['GET', 'mp3', '2'],
      ['GET', 'mp3', '2'],
    ]);
    for (const request of fetched)
      expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`);

    // A Range is cut from Twilio's stream; HEAD answers its headers and passes none of its audio on.
    const part = await fetch(`${app.baseUrl}/api/calls/${call.id}/recording`, { headers: { ...headers(), range: 'bytes=8-11' } });
    expect([part.status, part.headers.get('content-range'), Buffer.from(await part.arrayBuffer()).toString('ascii')]).toEqual([
      206,
      `bytes 8-11/${wav.body.length}`,
      'WAVE',
    ]);
    const head = await fetch(`${app.baseUrl}/api/calls/${call.id}/recording`, { method: 'HEAD', headers: headers() });
    expect([head.status, head.headers.get('content-length'), head.headers.get('accept-ranges'), (await head.arrayBuffer()).byteLength]).toEqual([
      200,
      String(wav.body.length),
      'bytes',
      0,
    ]);
    const past = await fetch(`${app.baseUrl}/api/calls/${call.id}/recording`, { headers: { ...headers(), range: `bytes=${wav.body.length}-` } });
    expect([past.status, past.headers.get('content-range')]).toEqual([416, `bytes */${wav.body.length}`]);
  });

  it('the carrier failing: 503 on download and delete, and nothing changes; lost at the carrier: 404 on download, delete marks it so', async () => {
    const [first, second] = result.calls.filter((each) => each.outcome === 'answered');
    fake.faults({ recordingStatusCode: 503 });
    const down = await acme.rest.get(`/api/calls/${first!.id}/recording`);
    expect([down.status, down.body.code]).toEqual([503, 'UNAVAILABLE']);
    const del = await acme.rest.delete(`/api/calls/${first!.id}/recording`);
    expect([del.status, del.body.code]).toEqual([503, 'UNAVAILABLE']);
    expect((await acme.rest.get(`/api/calls/${first!.id}`)).body.recording).toEqual(first!.recording);

    fake.faults({ recordingMissing: true });
    const lost = await acme.rest.get(`/api/calls/${first!.id}/recording`);
    expect([lost.status, lost.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(lost.body.detail).toContain('carrier no longer has this recording');
    expect((await acme.rest.delete(`/api/calls/${first!.id}/recording`)).status).toBe(204);
    expect((await acme.rest.get(`/api/calls/${first!.id}`)).body).toMatchObject({
      status: 'completed',
      outcome: 'answered',
      durationSeconds: 42,
      recording: { deletionReason: 'carrier' },
    });

    fake.faults({});
    expect((await acme.rest.delete(`/api/calls/${second!.id}/recording`)).status).toBe(204);
    expect((await acme.rest.get(`/api/calls/${second!.id}`)).body.recording.deletionReason).toBe('user');
    expect(fake.recordings().find((item) => item.sid === second!.recording.carrierRecordingId)!.deleted).toBe(true);
    const twice = await acme.rest.delete(`/api/calls/${second!.id}/recording`);
    expect([twice.status, twice.body.code]).toEqual([409, 'CONFLICT']);
  });
});

describe('consent, then <Start><Recording>', () => {
  it('records the callee who says yes from the consent on, and not the one who presses 2', async () => {
    const sentence = 'This call may be recorded. Press 2 to refuse.';
    const { calls } = await run(2, { recording: { enabled: true, consent: { sentence, refuseOn: ['digit:2'] } } }, (phones) => {
      fake.script((to) => ({ outcome: 'answered', durationSeconds: 30, stepMs: 5, turns: to === phones[0] ? ['Yes, sure.'] : [{ digits: '2' }] }));
    });
    for (const { form } of creates().filter((request) => calls.some((call) => call.to === request.form.To))) expect(form.Record).toBeUndefined();
    const [yes, no] = [calls.find((call) => call.recording?.status === 'completed'), calls.find((call) => call.recording?.status === 'refused')];
    expect(yes && no).toBeTruthy();
    const twilioYes = fake.calls().find((call) => call.sid === yes!.carrierCallId)!;
    const twilioNo = fake.calls().find((call) => call.sid === no!.carrierCallId)!;
    expect(twilioYes.heard[0]).toBe(sentence);
    expect(twilioNo.heard[0]).toBe(sentence);
    expect(twilioYes.documents[1]!.twiml).toContain('<Start><Recording');
    expect(twilioNo.documents.some((document) => document.twiml.includes('<Recording'))).toBe(false);
    expect(fake.recordings().filter((item) => item.callSid === twilioNo.sid)).toEqual([]);
    const [recorded] = fake.recordings().filter((item) => item.callSid === twilioYes.sid);
    expect(recorded).toMatchObject({ source: 'StartCallRecordingTwiML', channels: 'mono', status: 'completed' });
    expect(yes!.recording).toMatchObject({ carrierRecordingId: recorded!.sid, durationSeconds: 30 });
    expect(yes!.reachedNodeIds).toEqual(['start', 'hello', 'end']);
    expect((await download(app.baseUrl, `/api/calls/${yes!.id}/recording`, headers())).status).toBe(200);
    const refused = await acme.rest.get(`/api/calls/${no!.id}/recording`);
    expect([refused.status, refused.body.detail]).toEqual([404, expect.stringContaining('refused to be recorded')]);
  });
});

// Security review 4, L6: a replayed signed /answer asked for consent again after a refusal, and a "yes" then started <Start><Recording> while the ledger said refused.
describe('consent, once decided', () => {
  it('is never asked again: a replayed /answer is answered as the first was, changes nothing, and nothing starts a recording', async () => {
    const sentence = 'This call may be recorded. Press 2 to refuse.';
    const { calls } = await run(1, { recording: { enabled: true, consent: { sentence, refuseOn: ['digit:2'] } } }, () => {
      fake.script(() => ({ outcome: 'answered', durationSeconds: 30, stepMs: 5, turns: [{ digits: '2' }] }));
    });
    const [call] = calls;
    expect(call!.recording.status).toBe('refused');
    const atTwilio = fake.calls().find((each) => each.sid === call!.carrierCallId)!;
    const answered = atTwilio.documents[0]!;
    expect(answered.url).toContain('/answer?callId=');
    // The call as it stood before it ended: live, its consent refused.
    await app.sql(`update calls set status = 'in_progress' where id = ?`, [call!.id]);
    const stateOf = async () =>
      (await app.sql<{ voice_state: Record<string, unknown> }>('select voice_state from calls where id = ?', [call!.id]))[0]!.voice_state;
    const before = await stateOf();
    expect(before.consent).toBe('refused');

    const signed = (url: string, params: Record<string, string>) => postAsTwilio(url, params, fake.authToken, { 'i-twilio-idempotency-token': randomUUID() });
    const replayed = await signed(answered.url, {
      AccountSid: fake.accountSid,
      CallSid: call!.carrierCallId,
      CallStatus: 'in-progress',
      Direction: 'outbound-api',
    });
    expect(replayed.status).toBe(200);
    const twiml = await replayed.text();
    expect(twiml).toBe(answered.twiml);
    expect(await stateOf()).toEqual(before);

    // Saying yes at the consent prompt now is an ordinary turn: no recording starts.
    const gatherUrl = /<Gather [^>]*action="([^"]+)"/.exec(twiml)![1]!.replaceAll('&amp;', '&');
    const yes = await signed(gatherUrl, { AccountSid: fake.accountSid, CallSid: call!.carrierCallId, SpeechResult: 'Yes, sure.', Confidence: '0.9' });
    expect(yes.status).toBe(200);
    expect(await yes.text()).not.toMatch(/<(Start|Record|Recording)\b/);
    expect((await stateOf()).consent).toBe('refused');
    expect((await app.sql<{ status: string }>('select status from call_recordings where call_id = ?', [call!.id]))[0]!.status).toBe('refused');
    expect(fake.recordings().filter((item) => item.callSid === call!.carrierCallId)).toEqual([]);
    await app.sql(`update calls set status = 'completed' where id = ?`, [call!.id]);
  });
});

describe('the carrier failing a recording', () => {
  it('the call keeps its data; the recording says failed in Twilio’s words', async () => {
    fake.faults({ recordingStatus: 'failed' });
    const { calls } = await run(1, { recording: { enabled: true } }, () => fake.script(() => ({ outcome: 'answered', durationSeconds: 12, stepMs: 5 })));
    const [call] = calls;
    expect(call).toMatchObject({ status: 'completed', outcome: 'answered', durationSeconds: 12, errorText: null });
    expect(call!.recording).toMatchObject({ status: 'failed', channels: 'mono' });
    expect(call!.recording.errorText).toContain('ErrorCode 16104');
    const res = await acme.rest.get(`/api/calls/${call!.id}/recording`);
    expect([res.status, res.body.detail]).toEqual([404, expect.stringContaining('failed to record')]);
  });
});

describe('the recording status callback', () => {
  let callId: string;
  let connectionId: string;
  let delivered: { url: string; params: Record<string, string>; signature: string };

  beforeAll(async () => {
    const { calls, campaign } = await run(1, { recording: { enabled: true } }, () =>
      fake.script(() => ({ outcome: 'answered', durationSeconds: 5, stepMs: 5 })),
    );
    callId = calls[0]!.id;
    connectionId = campaign.connectionId;
    delivered = fake
      .callbacks()
      .filter((callback) => callback.params.RecordingStatus === 'completed' && callback.url.includes(callId))
      .at(-1)!;
  });

  const rowOf = async () => (await app.sql('select * from call_recordings where call_id = ?', [callId]))[0];
  const post = (url: string, params: Record<string, string>, signature?: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature ? { 'x-twilio-signature': signature } : {}) },
      body: new URLSearchParams(params).toString(),
    });

  it('unsigned, forged, or for another connection: 403 and nothing changes', async () => {
    const before = await rowOf();
    const failed = { ...delivered.params, RecordingStatus: 'failed', ErrorCode: '16104' };
    expect((await post(delivered.url, failed)).status).toBe(403);
    expect((await post(delivered.url, failed, twilio.getExpectedTwilioSignature('not-the-token', delivered.url, failed))).status).toBe(403);
    // Signed with the right token, but the URL names a connection that is not this account's.
    const elsewhere = delivered.url.replace(connectionId, randomUUID());
    expect((await post(elsewhere, failed, twilio.getExpectedTwilioSignature(fake.authToken, elsewhere, failed))).status).toBe(403);
    expect(await rowOf()).toEqual(before);
  });

  it('a replay, a late in-progress, a report of an unknown call, of another organization’s connection or of another recording is a logged no-op (200)', async () => {
    const before = await rowOf();
    expect((await post(delivered.url, delivered.params, delivered.signature)).status).toBe(200);
    const late = { ...delivered.params, RecordingStatus: 'in-progress' };
    expect((await post(delivered.url, late, twilio.getExpectedTwilioSignature(fake.authToken, delivered.url, late))).status).toBe(200);
    const unknown = delivered.url.replace(callId, randomUUID());
    expect((await post(unknown, delivered.params, twilio.getExpectedTwilioSignature(fake.authToken, unknown, delivered.params))).status).toBe(200);
    // Another organization's connection to the same Twilio account: its signature holds, but the call is not of that connection.
    const intruder = await app.organization('Intruder');
    const theirs = await intruder.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
    expect(theirs.status).toBe(201);
    const crossed = delivered.url.replace(connectionId, theirs.body.id);
    const crossedFailed = { ...delivered.params, RecordingStatus: 'failed' };
    expect((await post(crossed, crossedFailed, twilio.getExpectedTwilioSignature(fake.authToken, crossed, crossedFailed))).status).toBe(200);
    const another = { ...delivered.params, RecordingSid: `RE${'a'.repeat(32)}`, RecordingStatus: 'failed' };
    expect((await post(delivered.url, another, twilio.getExpectedTwilioSignature(fake.authToken, delivered.url, another))).status).toBe(200);
    expect(await rowOf()).toEqual(before);
  });

  it('retention deletes it at Twilio too, past the organization’s days', async () => {
    expect((await acme.rest.put('/api/organization', { recordingRetentionDays: 1 })).status).toBe(200);
    await recordingRetentionHook(app.gateway.services.recordings, 0)(new Date(Date.now() + 2 * 86_400_000));
    const { recording } = (await acme.rest.get(`/api/calls/${callId}`)).body;
    expect(recording).toMatchObject({ deletionReason: 'retention' });
    expect(fake.recordings().find((item) => item.sid === recording.carrierRecordingId)!.deleted).toBe(true);
    expect((await acme.rest.put('/api/organization', { recordingRetentionDays: null })).body.recordingRetentionDays).toBeNull();
  });
});

// Security review 4, M1: a connection deleted under its kept recordings left them undeletable, by a user or by retention.
describe('deleting a carrier connection that still keeps recordings', () => {
  it('is 409 naming them on both doors, unless keepRecordings; then retention says why it cannot delete them and tries again later', async () => {
    const globex = await app.organization('Globex');
    const campaign = await twilioCampaign(globex, fake, { contacts: 1, program: { recording: { enabled: true } } });
    fake.script(() => ({ outcome: 'answered', durationSeconds: 5, stepMs: 5 }));
    const runner = testRunner(app, { intervalMs: 20 });
    runner.start();
    try {
      await waitForExecution(globex, campaign.executionId, (execution) => execution.status === 'completed');
      await fake.settled();
    } finally {
      await runner.stop();
    }
    const [call] = (await globex.rest.get(`/api/calls?executionId=${campaign.executionId}`)).body.data as Record<string, any>[];
    expect(call!.recording).toMatchObject({ status: 'completed', deletedAt: null });
    const path = `/api/carrier-connections/${campaign.connectionId}`;

    // Another organization: 404 on both doors.
    expect((await acme.rest.delete(path)).status).toBe(404);
    expect((await acme.graphql.run(DeleteCarrierConnectionKeepingDocument, { id: campaign.connectionId })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    // The same bad flag: 400 on both doors.
    const bad = await globex.rest.delete(`${path}?keepRecordings=maybe`);
    expect([bad.status, bad.body.errors?.[0]?.field]).toEqual([400, 'keepRecordings']);
    const badGql = await globex.graphql.run(DeleteCarrierConnectionKeepingDocument, { id: campaign.connectionId, keepRecordings: 'maybe' as never });
    expect(badGql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    // Without it: 409 naming the call, on both doors, and nothing changes.
    const rest = await globex.rest.delete(path);
    expect([rest.status, rest.body.code, rest.body.errors?.[0]?.field]).toEqual([409, 'CONFLICT', 'keepRecordings']);
    expect(rest.body.detail).toContain(`1 recording kept at twilio (calls ${call!.id})`);
    const gql = await globex.graphql.run(DeleteCarrierConnectionKeepingDocument, { id: campaign.connectionId, keepRecordings: false });
    expect([gql.errors?.[0]?.extensions.code, gql.errors?.[0]?.message]).toEqual(['CONFLICT', rest.body.detail]);
    expect((await globex.rest.get(path)).status).toBe(200);

    // With it, the connection goes and the recording stays at the carrier; retention says it cannot delete it.
    expect(
      (await globex.graphql.ok(DeleteCarrierConnectionKeepingDocument, { id: campaign.connectionId, keepRecordings: true })).deleteCarrierConnection.id,
    ).toBe(campaign.connectionId);
    expect((await globex.rest.get(path)).status).toBe(404);
    expect((await globex.rest.put('/api/organization', { recordingRetentionDays: 1 })).status).toBe(200);
    const at = new Date(Date.now() + 2 * 86_400_000);
    await recordingRetentionHook(app.gateway.services.recordings, 0)(at);
    const { recording } = (await globex.rest.get(`/api/calls/${call!.id}`)).body;
    expect(recording).toMatchObject({
      status: 'completed',
      deletedAt: null,
      retentionFailures: 1,
      retentionRetryAt: new Date(at.getTime() + 3_600_000).toISOString(),
    });
    expect(recording.retentionError).toContain('the carrier connection it was made through is gone');
    expect(fake.recordings().find((item) => item.sid === recording.carrierRecordingId)!.deleted).toBeFalsy();
  });

  it('a connection with no kept recording is deleted at once (204)', async () => {
    const initech = await app.organization('Initech');
    const connection = await initech.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
    expect((await initech.rest.delete(`/api/carrier-connections/${connection.body.id}`)).status).toBe(204);
  });
});
