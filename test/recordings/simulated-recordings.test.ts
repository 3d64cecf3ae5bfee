import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { recordingRetentionHook } from '../../src/modules/recordings/recording-retention.js';
import {
  CallRecordingsDocument,
  CallWithRecordingDocument,
  CreateRecordingProgramDocument,
  DeleteCallRecordingDocument,
  ProgramRecordingDocument,
  SetRecordingRetentionDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, recordStatements, type TestUser } from '../helpers/users.js';
import { ALL_DAY, clock, createAudience, createFlow, importContacts, readExecution, tickUntil } from '../campaigns/fixtures.js';
import { download, readWav, says } from './fixtures.js';
import { testRunner } from '../runner/fixtures.js';

// Recordings on the simulated carrier: no account, the audio generated from the call's words and
// kept by the gateway, downloaded, deleted and expired through both doors.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let member: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  member = await addUser(app, acme, 'member');
  await acme.grantCredits(100);
});
afterAll(() => app?.close());

const DAY_MS = 86_400_000;

/** A runner that talks answered calls through the voice engine with the program's simulated caller. */
function voiceRunner(seed: string, weights: Record<string, number>) {
  return testRunner(app, {
    dialer: new SimulatedDialer({ seed, speedMs: 0, weights }),
    logger: createLogger('silent'),
    clock,
    conversations: app.gateway.services.conversations,
  });
}

/** A campaign over `contacts` new contacts with these program settings, run to its end; its calls as REST lists them. */
async function runCampaign(settings: Record<string, unknown>, contacts: number, seed: string, weights: Record<string, number>, org = acme) {
  const imported = await importContacts(org, contacts);
  const flowId = await createFlow(org);
  const created = await org.rest.post('/api/programs', {
    name: `Recorded ${seed}`,
    kind: 'campaign',
    flowId,
    audienceId: await createAudience(
      org,
      imported.map((contact) => contact.id),
    ),
    callingWindow: ALL_DAY,
    maxConcurrentCalls: 3,
    ...settings,
  });
  expect(created.status).toBe(201);
  expect((await org.rest.post(`/api/programs/${created.body.id}/activate`)).status).toBe(200);
  const execution = (await org.rest.post(`/api/programs/${created.body.id}/executions`)).body.id as string;
  expect((await org.rest.post(`/api/executions/${execution}/start`)).status).toBe(200);
  await tickUntil(
    voiceRunner(seed, weights),
    () => readExecution(org, created.body.id, execution),
    (state) => state.status === 'completed',
  );
  const calls = (await org.rest.get(`/api/calls?executionId=${execution}&limit=100`)).body.data as Record<string, any>[];
  expect(calls).toHaveLength(contacts);
  return { programId: created.body.id as string, executionId: execution, calls };
}

const headers = () => ({ 'x-api-key': acme.apiKey });

describe('a campaign with recording on', () => {
  let run: Awaited<ReturnType<typeof runCampaign>>;
  beforeAll(async () => {
    run = await runCampaign({ recording: { enabled: true, channels: 'dual' } }, 6, 'rec-dual', { answered: 1, no_answer: 1, busy: 0, voicemail: 0, failed: 0 });
  });

  it('keeps the setting, defaults filled in, on both doors', async () => {
    const rest = (await acme.rest.get(`/api/programs/${run.programId}`)).body;
    expect(rest.recording).toEqual({ enabled: true, channels: 'dual', consent: null });
    expect((await acme.graphql.ok(ProgramRecordingDocument, { id: run.programId })).program.recording).toEqual(rest.recording);
  });

  it('leaves a downloadable WAV per answered call, made from its words, and none for the calls not answered', async () => {
    const answered = run.calls.filter((call) => call.outcome === 'answered');
    const missed = run.calls.filter((call) => call.outcome !== 'answered');
    expect(answered.length).toBeGreaterThan(0);
    expect(missed.length).toBeGreaterThan(0);
    for (const call of answered) {
      expect(call.recording).toMatchObject({
        callId: call.id,
        carrier: 'simulator',
        status: 'completed',
        channels: 'dual',
        deletedAt: null,
        deletionReason: null,
        errorText: null,
      });
      expect(call.recording.durationSeconds).toBeGreaterThan(0);
      expect(call.recording.carrierRecordingId).toMatch(/^SR[0-9a-f]{32}$/);
      const audio = await download(app.baseUrl, `/api/calls/${call.id}/recording`, headers());
      expect([audio.status, audio.type]).toEqual([200, 'audio/wav']);
      expect(Number(audio.length)).toBe(audio.body.length);
      const wav = readWav(audio.body);
      expect([wav.channels, wav.sampleRate]).toEqual([2, 8000]);
      expect(Math.round(wav.samples[0]!.length / 8000)).toBe(call.recording.durationSeconds);
      // The gateway's side (second channel) says what the flow said; the callee (first) was never asked anything, so is silent.
      expect(await says(wav.samples[1]!, 'Say hello')).toEqual({ speech: true, sameLength: true, correlation: expect.any(Number) });
      expect((await says(wav.samples[1]!, 'Say hello')).correlation).toBeGreaterThan(0.9);
      expect(wav.samples[0]!.every((sample) => sample === 0)).toBe(true);
    }
    for (const call of missed) {
      expect(call.recording).toBeNull();
      const none = await acme.rest.get(`/api/calls/${call.id}/recording`);
      expect([none.status, none.body.code]).toEqual([404, 'NOT_FOUND']);
      expect(none.body.detail).toContain('has no recording');
    }
    const gql = await acme.graphql.ok(CallRecordingsDocument, { executionId: run.executionId });
    const byId = new Map(run.calls.map((call) => [call.id, call.recording]));
    for (const call of gql.calls.data) expect(call.recording).toEqual(byId.get(call.id));
  });

  // Security review 4, Info: the download ignored Range, and HEAD read the whole file.
  it('serves a Range as 206 with Content-Range, one past the end as 416, and HEAD without reading the audio', async () => {
    const call = run.calls.find((each) => each.outcome === 'answered')!;
    const path = `/api/calls/${call.id}/recording`;
    const full = await download(app.baseUrl, path, headers());
    const size = full.body.length;
    const part = async (range: string) => {
      const res = await fetch(`${app.baseUrl}${path}`, { headers: { ...headers(), range } });
      return {
        status: res.status,
        range: res.headers.get('content-range'),
        length: res.headers.get('content-length'),
        accept: res.headers.get('accept-ranges'),
        body: Buffer.from(await res.arrayBuffer()),
      };
    };
    expect(await part('bytes=0-43')).toEqual({ status: 206, range: `bytes 0-43/${size}`, length: '44', accept: 'bytes', body: full.body.subarray(0, 44) });
    // Past a slice of the stored audio (64 KiB), to the end.
    const from = Math.min(70_000, size - 10);
    expect(await part(`bytes=${from}-`)).toMatchObject({ status: 206, range: `bytes ${from}-${size - 1}/${size}`, body: full.body.subarray(from) });
    expect(await part('bytes=-100')).toMatchObject({ status: 206, range: `bytes ${size - 100}-${size - 1}/${size}`, body: full.body.subarray(size - 100) });
    // Several ranges, or a malformed one: the whole file.
    for (const range of ['bytes=0-1,100-101', 'bytes=x-y', 'pages=1-2'])
      expect(await part(range)).toMatchObject({ status: 200, range: null, accept: 'bytes', body: full.body });
    const past = await fetch(`${app.baseUrl}${path}`, { headers: { ...headers(), range: `bytes=${size}-` } });
    expect([past.status, past.headers.get('content-range'), ((await past.json()) as { code: string }).code]).toEqual([
      416,
      `bytes */${size}`,
      'RANGE_NOT_SATISFIABLE',
    ]);

    const statements = await recordStatements(app, async () => {
      const head = await fetch(`${app.baseUrl}${path}`, { method: 'HEAD', headers: headers() });
      expect([head.status, head.headers.get('content-length'), head.headers.get('accept-ranges'), head.headers.get('content-type')]).toEqual([
        200,
        String(size),
        'bytes',
        'audio/wav',
      ]);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    });
    expect(statements.some((sql) => /octet_length\(audio\)/.test(sql))).toBe(true);
    expect(statements.filter((sql) => /substring\(audio/.test(sql))).toEqual([]);
    // Another organization: 404, whatever the Range.
    expect((await fetch(`${app.baseUrl}${path}`, { headers: { 'x-api-key': other.apiKey, range: 'bytes=0-1' } })).status).toBe(404);
  });

  it('serves WAV only for a simulated call: format=mp3 → 400 naming format; a bad format → 400', async () => {
    const call = run.calls.find((each) => each.outcome === 'answered')!;
    const mp3 = await acme.rest.get(`/api/calls/${call.id}/recording?format=mp3`);
    expect([mp3.status, mp3.body.code, mp3.body.errors?.[0]?.field]).toEqual([400, 'BAD_USER_INPUT', 'format']);
    const bad = await acme.rest.get(`/api/calls/${call.id}/recording?format=ogg`);
    expect([bad.status, bad.body.errors?.[0]?.field]).toEqual([400, 'format']);
  });

  it('another organization gets 404 on every route and field, and nothing changes', async () => {
    const call = run.calls.find((each) => each.outcome === 'answered')!;
    for (const method of ['GET', 'DELETE']) {
      const res = await other.rest.request(method, `/api/calls/${call.id}/recording`);
      expect([method, res.status, res.body.code]).toEqual([method, 404, 'NOT_FOUND']);
    }
    expect((await other.graphql.run(DeleteCallRecordingDocument, { callId: call.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.graphql.run(CallWithRecordingDocument, { id: call.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.get(`/api/calls/${call.id}`)).body.recording).toEqual(call.recording);
  });

  it('a member reads and downloads, but may not delete (403 on both doors, nothing changes)', async () => {
    const call = run.calls.find((each) => each.outcome === 'answered')!;
    expect((await download(app.baseUrl, `/api/calls/${call.id}/recording`, { 'x-api-key': member.apiKey })).status).toBe(200);
    expect((await member.rest.delete(`/api/calls/${call.id}/recording`)).status).toBe(403);
    expect((await member.graphql.run(DeleteCallRecordingDocument, { callId: call.id })).errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect((await acme.rest.get(`/api/calls/${call.id}`)).body.recording).toEqual(call.recording);
  });

  it('deletes on both doors: the audio is gone, the record says when and why; twice → 409 and nothing changes', async () => {
    const [first, second] = run.calls.filter((each) => each.outcome === 'answered');
    const rest = await acme.rest.delete(`/api/calls/${first!.id}/recording`);
    expect([rest.status, rest.body]).toEqual([204, undefined]);
    const { recording } = (await acme.rest.get(`/api/calls/${first!.id}`)).body;
    expect(recording).toMatchObject({ callId: first!.id, status: 'completed', deletionReason: 'user' });
    expect(Number.isNaN(Date.parse(recording.deletedAt))).toBe(false);
    const gone = await acme.rest.get(`/api/calls/${first!.id}/recording`);
    expect([gone.status, gone.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(gone.body.detail).toContain('was deleted');
    const again = await acme.rest.delete(`/api/calls/${first!.id}/recording`);
    expect([again.status, again.body.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.detail).toContain('already deleted');
    const gqlAgain = await acme.graphql.run(DeleteCallRecordingDocument, { callId: first!.id });
    expect(gqlAgain.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await acme.rest.get(`/api/calls/${first!.id}`)).body.recording).toEqual(recording);

    const gql = await acme.graphql.ok(DeleteCallRecordingDocument, { callId: second!.id });
    expect(gql.deleteCallRecording).toMatchObject({ callId: second!.id, deletionReason: 'user' });
    expect(gql.deleteCallRecording.deletedAt).not.toBeNull();
    const [row] = await app.sql<{ audio: unknown }>('select audio from call_recordings where call_id = ?', [second!.id]);
    expect(row!.audio).toBeNull();
  });

  it('a call without a recording: DELETE → 404 saying so', async () => {
    const missed = run.calls.find((each) => each.outcome !== 'answered')!;
    const res = await acme.rest.delete(`/api/calls/${missed.id}/recording`);
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(res.body.detail).toContain('has no recording');
  });
});

describe('consent', () => {
  const consent = { sentence: 'This call may be recorded. Press 2 or say no to refuse.' };

  it('a callee who refuses is not recorded (the recording says refused); one who says yes is, after the sentence', async () => {
    const refused = await runCampaign(
      { recording: { enabled: true, consent }, simulatedCaller: { utterances: ['2', 'Yes, that works for me.'] } },
      2,
      'rec-refuse',
      { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 },
    );
    for (const call of refused.calls) {
      expect(call.recording).toMatchObject({ status: 'refused', carrierRecordingId: null, durationSeconds: null, channels: 'mono' });
      const res = await acme.rest.get(`/api/calls/${call.id}/recording`);
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      expect(res.body.detail).toContain('refused to be recorded');
      expect((await acme.rest.delete(`/api/calls/${call.id}/recording`)).status).toBe(409);
    }
    const saidNo = await runCampaign(
      { recording: { enabled: true, consent: { ...consent, refuseOn: ['said:no'] } }, simulatedCaller: { utterances: ['No, please do not.'] } },
      1,
      'rec-no',
      { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 },
    );
    expect(saidNo.calls[0]!.recording.status).toBe('refused');

    const given = await runCampaign({ recording: { enabled: true, consent }, simulatedCaller: { utterances: ['Yes, I know, go ahead.'] } }, 2, 'rec-given', {
      answered: 1,
      no_answer: 0,
      busy: 0,
      voicemail: 0,
      failed: 0,
    });
    for (const call of given.calls) {
      expect(call.recording).toMatchObject({ status: 'completed', channels: 'mono' });
      expect(call.reachedNodeIds).toEqual(['start', 'say', 'end']);
      const audio = await download(app.baseUrl, `/api/calls/${call.id}/recording`, { ...headers(), accept: 'audio/wav' });
      const wav = readWav(audio.body);
      expect(wav.channels).toBe(1);
      // Recorded from the consent on: what the flow said, neither the consent sentence nor the answer to it.
      const said = await says(wav.samples[0]!, 'Say hello');
      expect([said.speech, said.sameLength]).toEqual([true, true]);
      expect(said.correlation).toBeGreaterThan(0.9);
    }
    const program = (await acme.rest.get(`/api/programs/${given.programId}`)).body;
    expect(program.recording).toEqual({ enabled: true, channels: 'mono', consent: { sentence: consent.sentence, refuseOn: ['digit:2', 'said:no'] } });
  });

  it('bad settings answer the same 400 on both doors', async () => {
    const audienceId = await createAudience(
      acme,
      (await importContacts(acme, 1)).map((contact) => contact.id),
    );
    const flowId = await createFlow(acme);
    const cases: [Record<string, unknown>, string][] = [
      [{ enabled: true, consent: { sentence: '' } }, 'recording.consent.sentence'],
      [{ enabled: true, consent: { sentence: 'Recorded.', refuseOn: ['maybe'] } }, 'recording.consent.refuseOn'],
      [{ enabled: true, consent: { sentence: 'Recorded.', refuseOn: [] } }, 'recording.consent.refuseOn'],
    ];
    for (const [recording, field] of cases) {
      const input = { name: 'Bad', kind: 'campaign', flowId, audienceId, recording };
      const rest = await acme.rest.post('/api/programs', input);
      expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(rest.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      const gql = await acme.graphql.run(CreateRecordingProgramDocument, { input: input as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect((gql.errors?.[0]?.extensions.errors as { field: string }[]).map((error) => error.field)).toEqual(
        rest.body.errors.map((error: { field: string }) => error.field),
      );
    }
    const rest = await acme.rest.post('/api/programs', { name: 'Bad', kind: 'campaign', flowId, audienceId, recording: { enabled: true, channels: 'stereo' } });
    expect([rest.status, rest.body.errors?.[0]?.field]).toEqual([400, 'recording.channels']);
  });
});

describe('retention', () => {
  it('is an organization setting on both doors, checked the same way', async () => {
    const rest = await acme.rest.put('/api/organization', { recordingRetentionDays: 30 });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ name: 'Acme', recordingRetentionDays: 30 });
    const gql = await acme.graphql.ok(SetRecordingRetentionDocument, { input: { recordingRetentionDays: 7 } });
    expect(gql.updateOrganization).toMatchObject({ name: 'Acme', recordingRetentionDays: 7 });
    for (const days of [0, 3651, 1.5]) {
      const bad = await acme.rest.put('/api/organization', { recordingRetentionDays: days });
      expect([bad.status, bad.body.errors?.[0]?.field]).toEqual([400, 'recordingRetentionDays']);
      const badGql = await acme.graphql.run(SetRecordingRetentionDocument, { input: { recordingRetentionDays: days } });
      expect(badGql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
    expect((await member.rest.put('/api/organization', { recordingRetentionDays: 1 })).status).toBe(403);
    expect((await acme.rest.get('/api/organization')).body.recordingRetentionDays).toBe(7);
  });

  it('past it, a runner tick deletes the recordings and the record says retention; younger ones and other organizations’ stay', async () => {
    const run = await runCampaign({ recording: { enabled: true } }, 2, 'rec-retention', { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 });
    expect((await acme.rest.put('/api/organization', { recordingRetentionDays: 2 })).status).toBe(200);
    const hook = recordingRetentionHook(app.gateway.services.recordings, 0);
    await hook(new Date(Date.now() + DAY_MS));
    for (const call of run.calls) expect((await acme.rest.get(`/api/calls/${call.id}`)).body.recording.deletedAt).toBeNull();
    await hook(new Date(Date.now() + 3 * DAY_MS));
    for (const call of run.calls) {
      const { recording } = (await acme.rest.get(`/api/calls/${call.id}`)).body;
      expect(recording).toMatchObject({ status: 'completed', deletionReason: 'retention' });
      expect((await acme.graphql.ok(CallWithRecordingDocument, { id: call.id })).call.recording).toEqual(recording);
      expect((await acme.rest.get(`/api/calls/${call.id}/recording`)).status).toBe(404);
    }
  });

  // Security review 4, M1: 50 recordings of one organization that cannot be deleted held every other organization's back, for good.
  it('one organization’s recordings that cannot be deleted hold no other’s back: each is skipped with back-off and says why, on both doors', async () => {
    const globex = await app.organization('Globex');
    await globex.grantCredits(10);
    const answered = { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 };
    const stuck = await runCampaign({ recording: { enabled: true } }, 1, 'rec-stuck', answered);
    const theirs = await runCampaign({ recording: { enabled: true } }, 1, 'rec-theirs', answered, globex);
    // 60 of Acme's recordings kept at Twilio through a connection that is gone, all older than Globex's.
    const gone = randomUUID();
    const stuckCall = stuck.calls[0]!.id as string;
    await app.sql(
      `update call_recordings set carrier = 'twilio', carrier_connection_id = ?, carrier_recording_id = 'RE00000000000000000000000000000000', audio = null, created_at = now() - interval '20 days' where call_id = ?`,
      [gone, stuckCall],
    );
    await app.sql(
      `with copies as (select gen_random_uuid() as id, n from generate_series(1, 59) n),
            calls_made as (insert into calls select (jsonb_populate_record(null::calls, to_jsonb(c) || jsonb_build_object('id', copies.id, 'carrier_call_id', null, 'execution_contact_id', null))).* from calls c, copies where c.id = ? returning id)
       insert into call_recordings select (jsonb_populate_record(null::call_recordings, to_jsonb(r) || jsonb_build_object('id', gen_random_uuid(), 'call_id', m.id))).* from call_recordings r, calls_made m where r.call_id = ?`,
      [stuckCall, stuckCall],
    );
    await app.sql(`update call_recordings set created_at = now() - interval '10 days' where call_id = ?`, [theirs.calls[0]!.id]);
    expect(
      await app.sql(`select count(*)::int as n from call_recordings where organization_id = ? and carrier_connection_id = ?`, [acme.organizationId, gone]),
    ).toEqual([{ n: 60 }]);
    for (const org of [acme, globex]) expect((await org.rest.put('/api/organization', { recordingRetentionDays: 2 })).status).toBe(200);

    const now = Date.now();
    const hook = recordingRetentionHook(app.gateway.services.recordings, 0);
    await hook(new Date(now));
    const mine = (await globex.rest.get(`/api/calls/${theirs.calls[0]!.id}`)).body.recording;
    expect(mine).toMatchObject({ deletionReason: 'retention', retentionFailures: 0, retentionError: null, retentionRetryAt: null });

    const failed = async () =>
      (await app.sql<{ n: number }>(`select retention_failures as n from call_recordings where carrier_connection_id = ? group by 1`, [gone])).map(
        (row) => row.n,
      );
    expect(await failed()).toEqual([1]);
    const rest = (await acme.rest.get(`/api/calls/${stuckCall}`)).body.recording;
    expect(rest).toMatchObject({ status: 'completed', deletedAt: null, retentionFailures: 1, retentionRetryAt: new Date(now + 3_600_000).toISOString() });
    expect(rest.retentionError).toContain('the carrier connection it was made through is gone');
    expect((await acme.graphql.ok(CallWithRecordingDocument, { id: stuckCall })).call.recording).toEqual(rest);
    // Another organization reads none of it.
    expect((await globex.rest.get(`/api/calls/${stuckCall}`)).status).toBe(404);
    expect((await globex.graphql.run(CallWithRecordingDocument, { id: stuckCall })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');

    // Skipped until the retry time, then tried again and put off twice as long.
    await hook(new Date(now + 30 * 60_000));
    expect(await failed()).toEqual([1]);
    await hook(new Date(now + 61 * 60_000));
    expect(await failed()).toEqual([2]);
    expect((await acme.rest.get(`/api/calls/${stuckCall}`)).body.recording.retentionRetryAt).toBe(new Date(now + 61 * 60_000 + 2 * 3_600_000).toISOString());
    for (const org of [acme, globex]) expect((await org.rest.put('/api/organization', { recordingRetentionDays: null })).status).toBe(200);
  });
});
