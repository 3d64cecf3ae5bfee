import { randomBytes } from 'node:crypto';
import { CallRecordingsDocument, CallWithRecordingDocument, DeleteCallRecordingDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';
import { TELNYX_SPEC_SOURCE } from '../support/telnyx-texml-spec.js';
import { testRunner } from '../runner/fixtures.js';
import { createAudience } from '../programs/fixtures.js';
import { FLOW, waitForExecution } from '../telephony/fixtures.js';
import { connectTelnyx } from '../telephony/telnyx-connection.js';
import { download, readWav } from './fixtures.js';

// Recordings through Telnyx (the loopback TeXML double, every request checked against Telnyx's
// vendored OpenAPI): Record on the call, <Start><Recording> after consent, signed TeXML recording callbacks, the audio streamed from
// the recording resource's media_url through the gateway's route, deleted at Telnyx, on both doors.

let telnyx: FakeTelnyx;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let fromNumberId: string;

beforeAll(async () => {
  telnyx = await startFakeTelnyx();
  app = await startTestApp({
    telephony: { twilioApiBaseUrl: 'http://127.0.0.1:9', telnyxApiBaseUrl: telnyx.url, credentialsKey: randomBytes(32), publicUrl: undefined },
  });
  app.config.telephony.publicUrl = app.baseUrl;
  acme = await app.organization('Acme Telnyx recordings');
  other = await app.organization('Other Telnyx recordings');
  await acme.grantCredits(20);
  ({ connectionId, fromNumberId } = await connectTelnyx(acme, telnyx, '2000000000000000001'));
}, 60_000);
afterAll(async () => {
  await telnyx?.settled();
  await app?.close();
  await telnyx?.close();
});
afterEach(() => telnyx.faults({}));

const headers = () => ({ 'x-api-key': acme.apiKey });

/** A Telnyx campaign recording its calls, run to its end: its calls as REST lists them. */
async function run(contacts: number, recording: Record<string, unknown>, script: (phones: string[]) => void) {
  const audience = await createAudience(acme, contacts);
  const rows = await app.sql<{ phone: string }>(
    `select phone from contacts where id in (${audience.contactIds.map(() => '?').join(', ')})`,
    audience.contactIds,
  );
  const flow = await acme.rest.post('/api/call-flows', FLOW);
  const program = await acme.rest.post('/api/programs', {
    name: 'Telnyx recorded',
    kind: 'campaign',
    flowId: flow.body.id,
    audienceId: audience.id,
    carrier: 'telnyx',
    fromNumberId,
    recording,
    retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
  });
  expect(program.status).toBe(201);
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  script(rows.map((row) => row.phone));
  const execution = await acme.rest.post(`/api/programs/${program.body.id}/executions`);
  const runner = testRunner(app, { intervalMs: 20 });
  runner.start();
  try {
    expect((await acme.rest.post(`/api/executions/${execution.body.id}/start`)).status).toBe(200);
    await waitForExecution(acme, execution.body.id, (value) => value.status === 'completed');
    await telnyx.settled();
  } finally {
    await runner.stop();
  }
  const calls = (await acme.rest.get(`/api/calls?executionId=${execution.body.id}&limit=100`)).body.data as Record<string, any>[];
  return { executionId: execution.body.id as string, calls };
}

describe('consent, then <Start><Recording> on Telnyx', () => {
  it('records the callee who says yes from the consent on (WAV, as TeXML is asked), and not the one who presses 2', async () => {
    const sentence = 'This call may be recorded. Press 2 to refuse.';
    const refusedBefore = telnyx.refusals().length;
    const { calls } = await run(2, { enabled: true, consent: { sentence, refuseOn: ['digit:2'] } }, (phones) => {
      telnyx.script((to) => ({ outcome: 'answered', durationSeconds: 30, turns: to === phones[0] ? ['Yes, sure.'] : [{ digits: '2' }] }));
    });
    expect(telnyx.refusals().slice(refusedBefore)).toEqual([]);
    const [yes, no] = [calls.find((call) => call.recording?.status === 'completed'), calls.find((call) => call.recording?.status === 'refused')];
    expect(yes && no).toBeTruthy();
    const telnyxYes = telnyx.calls().find((call) => call.sid === yes!.carrierCallId)!;
    const telnyxNo = telnyx.calls().find((call) => call.sid === no!.carrierCallId)!;
    // Nothing asked on the call itself: only the consent's answer starts a recording.
    expect([telnyxYes.record, telnyxNo.record]).toEqual([null, null]);
    expect([telnyxYes.heard[0], telnyxNo.heard[0]]).toEqual([sentence, sentence]);
    expect(telnyxYes.documents[1]!.texml).toContain('<Start><Recording');
    expect(telnyxNo.documents.some((document) => document.texml.includes('<Recording'))).toBe(false);
    expect(telnyx.recordings().filter((item) => item.callSid === telnyxNo.sid)).toEqual([]);
    const [recorded] = telnyx.recordings().filter((item) => item.callSid === telnyxYes.sid);
    expect(recorded).toMatchObject({ source: 'StartCallRecordingAPI', channels: 1 });
    expect(yes!.recording).toMatchObject({ carrier: 'telnyx', carrierRecordingId: recorded!.sid, channels: 'mono', durationSeconds: 30 });
    const wav = await download(app.baseUrl, `/api/calls/${yes!.id}/recording`, headers());
    expect([wav.status, wav.body.equals(recorded!.wav)]).toEqual([200, true]);
    const refused = await acme.rest.get(`/api/calls/${no!.id}/recording`);
    expect([refused.status, refused.body.detail]).toEqual([404, expect.stringContaining('refused to be recorded')]);
  });
});

describe('Record on a Telnyx call', () => {
  let result: Awaited<ReturnType<typeof run>>;
  const refusedBefore = { count: 0 };
  beforeAll(async () => {
    refusedBefore.count = telnyx.refusals().length;
    result = await run(3, { enabled: true, channels: 'dual' }, (phones) => {
      telnyx.script((to) => ({ outcome: to === phones[1] ? 'busy' : 'answered', durationSeconds: 7 }));
    });
  }, 60_000);

  it('asks Telnyx to record each call with fields its published InitiateCallRequest accepts', () => {
    expect(TELNYX_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(telnyx.refusals().slice(refusedBefore.count)).toEqual([]);
    for (const call of result.calls) {
      const atTelnyx = telnyx.calls().find((each) => each.sid === call.carrierCallId)!;
      expect(atTelnyx.record).toEqual({
        channels: 'dual',
        callback: `${app.baseUrl}/telephony/telnyx/${connectionId}/recording?callId=${call.id}`,
        events: ['in-progress', 'completed', 'absent'],
      });
    }
  });

  it('keeps a recording per answered call with Telnyx’s id and none of its URL, on both doors; the busy call has none', async () => {
    const graph = await acme.graphql.ok(CallRecordingsDocument, { executionId: result.executionId });
    for (const call of result.calls) {
      const atTelnyx = telnyx.recordings().filter((each) => each.callSid === call.carrierCallId);
      if (call.outcome !== 'answered') {
        expect([call.outcome, call.recording, atTelnyx]).toEqual(['busy', null, []]);
        continue;
      }
      expect(atTelnyx).toHaveLength(1);
      const expected = {
        carrier: 'telnyx',
        carrierRecordingId: atTelnyx[0]!.sid,
        status: 'completed',
        channels: 'dual',
        durationSeconds: 7,
        errorText: null,
        deletedAt: null,
      };
      expect(call.recording).toMatchObject(expected);
      expect(graph.calls.data.find((each) => each.id === call.id)?.recording).toMatchObject(expected);
      // Every callback it sent was answered 200.
      expect(
        telnyx
          .recordingCallbacks()
          .filter((each) => each.fields.CallSid === call.carrierCallId)
          .map((each) => [each.fields.RecordingStatus, each.status]),
      ).toEqual([
        ['in-progress', 200],
        ['completed', 200],
      ]);
      const [row] = await app.sql<Record<string, unknown>>('select * from call_recordings where call_id = ?', [call.id]);
      expect(JSON.stringify(row)).not.toContain('http');
      expect(JSON.stringify(row)).not.toContain(telnyx.apiKey);
    }
  });

  it('streams the audio from the recording’s media_url through the gateway: WAV with both channels; MP3 is refused naming WAV', async () => {
    const call = result.calls.find((each) => each.outcome === 'answered')!;
    const kept = telnyx.recordings().find((each) => each.sid === call.recording.carrierRecordingId)!;
    const wav = await download(app.baseUrl, `/api/calls/${call.id}/recording`, headers());
    expect([wav.status, wav.type, wav.length]).toEqual([200, 'audio/wav', String(kept.wav.length)]);
    expect(wav.body.equals(kept.wav)).toBe(true);
    expect(readWav(wav.body).channels).toBe(2);
    const mp3 = await download(app.baseUrl, `/api/calls/${call.id}/recording?format=mp3`, headers());
    expect(mp3).toMatchObject({ status: 409, json: { code: 'CONFLICT', detail: expect.stringContaining('format=wav') } });
    // A Range is cut from Telnyx's stream as it passes.
    const part = await fetch(`${app.baseUrl}/api/calls/${call.id}/recording`, { headers: { ...headers(), range: 'bytes=8-11' } });
    expect([part.status, Buffer.from(await part.arrayBuffer()).toString('ascii')]).toEqual([206, 'WAVE']);
    // Telnyx unavailable: 503, nothing changed.
    telnyx.faults({ recordingStatus: 503 });
    expect((await download(app.baseUrl, `/api/calls/${call.id}/recording`, headers())).status).toBe(503);
    telnyx.faults({});
    expect(telnyx.refusals().filter((each) => each.status !== 503 && each.path.includes('Recordings'))).toEqual([]);
  });

  it('is another organization’s 404 on both doors: download, read and delete', async () => {
    const call = result.calls.find((each) => each.outcome === 'answered')!;
    expect((await download(app.baseUrl, `/api/calls/${call.id}/recording`, { 'x-api-key': other.apiKey })).status).toBe(404);
    expect((await other.rest.delete(`/api/calls/${call.id}/recording`)).status).toBe(404);
    expect((await other.graphql.run(CallWithRecordingDocument, { id: call.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.graphql.run(DeleteCallRecordingDocument, { callId: call.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect(telnyx.recordings().find((each) => each.sid === call.recording.carrierRecordingId)!.deleted).toBe(false);
  });

  it('deletes at Telnyx and here on either door; one Telnyx had already lost is marked deleted by the carrier', async () => {
    const [first, second] = result.calls.filter((each) => each.outcome === 'answered');
    expect((await acme.rest.delete(`/api/calls/${first!.id}/recording`)).status).toBe(204);
    expect(telnyx.recordings().find((each) => each.sid === first!.recording.carrierRecordingId)!.deleted).toBe(true);
    const gone = await download(app.baseUrl, `/api/calls/${first!.id}/recording`, headers());
    expect(gone.status).toBe(404);
    expect((await acme.rest.get(`/api/calls/${first!.id}`)).body.recording).toMatchObject({ deletionReason: 'user', deletedAt: expect.any(String) });

    telnyx.recordings().find((each) => each.sid === second!.recording.carrierRecordingId)!.deleted = true;
    const deleted = await acme.graphql.ok(DeleteCallRecordingDocument, { callId: second!.id });
    expect(deleted.deleteCallRecording).toMatchObject({ deletionReason: 'carrier', deletedAt: expect.any(String) });
    expect(telnyx.refusals().filter((each) => each.path.includes('Recordings') && each.status !== 503)).toEqual([]);
  });
});

describe('the TeXML recording status callback', () => {
  it('unsigned, signed by another key, or for another connection: 403 and nothing changes', async () => {
    const { calls } = await run(1, { enabled: true }, () => telnyx.script(() => ({ outcome: 'answered', durationSeconds: 3 })));
    const call = calls[0]!;
    expect(call.recording).toMatchObject({ carrier: 'telnyx', status: 'completed', channels: 'mono' });
    const delivered = telnyx.recordingCallbacks().find((each) => each.fields.CallSid === call.carrierCallId && each.fields.RecordingStatus === 'completed')!;
    const rowOf = async () => (await app.sql('select * from call_recordings where call_id = ?', [call.id]))[0];
    const before = await rowOf();
    const failed = new URLSearchParams({ ...delivered.fields, RecordingStatus: 'failed' }).toString();
    const post = (url: string, body: string, signed: Record<string, string>) => fetch(url, { method: 'POST', headers: signed, body });
    expect((await post(delivered.url, failed, { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(403);
    telnyx.faults({ forgeSignatures: true });
    expect((await post(delivered.url, failed, telnyx.signedHeaders(failed))).status).toBe(403);
    telnyx.faults({});
    // Signed by Telnyx, but the URL names a connection that is not this account's.
    const elsewhere = delivered.url.replace(connectionId, '00000000-0000-4000-8000-000000000000');
    expect((await post(elsewhere, failed, telnyx.signedHeaders(failed))).status).toBe(403);
    // An old timestamp is past Telnyx's replay window.
    expect((await post(delivered.url, failed, telnyx.signedHeaders(failed, Math.floor(Date.now() / 1000) - 3600))).status).toBe(403);
    expect(await rowOf()).toEqual(before);
  });
});
