import { randomBytes } from 'node:crypto';
import { CarrierConnectionDocument, CreateCarrierConnectionDocument, UpdateCarrierConnectionDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { callerSpeech } from '../support/media-stream-client.js';
import { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import { testRunner } from '../runner/fixtures.js';
import { createVoiceAgent } from '../voice/fixtures.js';
import { createAudience } from '../programs/fixtures.js';
import { FLOW, waitForExecution } from './fixtures.js';
import { randomNumber, telnyxConnectionFields } from './telnyx-connection.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';

// Telnyx as a second carrier, through the real doors: a connection (its API key sealed and never
// shown), a number on it, calls placed through the loopback Telnyx (every request checked against
// Telnyx's vendored OpenAPI, test/support/telnyx-texml.schemas.md) and its signed TeXML callbacks,
// an inbound call answered with TeXML, an sts agent over Telnyx media streaming; the same flow call
// runs on Twilio and Telnyx from one table.

let telnyx: FakeTelnyx;
let twilio: FakeTwilio;
let realtime: FakeRealtime;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let runner: CampaignRunner;
let connectionId: string;
let from: string;
const APPLICATION_ID = '2000000000000000001';

const telnyxConnection = (overrides: Record<string, unknown> = {}) => telnyxConnectionFields(telnyx, APPLICATION_ID, overrides);

beforeAll(async () => {
  telnyx = await startFakeTelnyx();
  twilio = await startFakeTwilio();
  realtime = await startFakeRealtime();
  app = await startTestApp({
    telephony: { twilioApiBaseUrl: twilio.url, telnyxApiBaseUrl: telnyx.url, credentialsKey: randomBytes(32), publicUrl: undefined },
    providers: { openaiApiKey: 'sk-test-realtime-key', openaiRealtimeUrl: realtime.url },
  });
  app.config.telephony.publicUrl = app.baseUrl;
  acme = await app.organization('Acme Telnyx');
  other = await app.organization('Other Telnyx');
  await acme.grantCredits(20);
  runner = testRunner(app, { intervalMs: 20 });
  runner.start();
}, 60_000);
afterAll(async () => {
  // Every call's callbacks sent before the gateway goes.
  await Promise.all([telnyx?.settled(), twilio?.settled()]);
  await runner?.stop();
  await app?.close();
  await Promise.all([telnyx?.close(), twilio?.close(), realtime?.close()]);
});
afterEach(() => telnyx.faults({}));

/** The call on the REST door once `done` holds. */
const callOnceItIs = (id: string, done: (call: Record<string, any>) => boolean, what: string) =>
  eventually(async () => (await acme.rest.get(`/api/calls/${id}`)).body as Record<string, any>, done, { what, everyMs: 20 });
const isFinal = (call: Record<string, any>) => !['queued', 'ringing', 'in_progress'].includes(call.status);

describe('a Telnyx connection', () => {
  it('is created with its account, API key, public key and TeXML application: the key is shown as its last 4 only, never again', async () => {
    const created = await acme.rest.post('/api/carrier-connections', telnyxConnection());
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      carrier: 'telnyx',
      accountSid: telnyx.accountSid,
      authTokenLast4: telnyx.apiKey.slice(-4),
      publicKey: telnyx.publicKey,
      applicationId: APPLICATION_ID,
    });
    connectionId = created.body.id;
    const read = await acme.rest.get(`/api/carrier-connections/${connectionId}`);
    const graph = await acme.graphql.ok(CarrierConnectionDocument, { id: connectionId });
    for (const shown of [JSON.stringify(created.body), JSON.stringify(read.body), JSON.stringify(graph)]) expect(shown).not.toContain(telnyx.apiKey);
    expect(graph.carrierConnection).toMatchObject({ carrier: 'telnyx', publicKey: telnyx.publicKey, applicationId: APPLICATION_ID });
    // Sealed in the database, as Twilio's auth token is.
    const [row] = await app.sql<{ auth_token_encrypted: string }>('select auth_token_encrypted from carrier_connections where id = ?', [connectionId]);
    expect(row!.auth_token_encrypted).toMatch(/^v1:/);
    expect(row!.auth_token_encrypted).not.toContain(telnyx.apiKey);

    from = randomNumber();
    expect((await acme.rest.post('/api/phone-numbers', { number: from, carrierConnectionId: connectionId })).status).toBe(201);
  });

  it('refuses Telnyx fields of the wrong form, or missing, with the same code and fields on both doors', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ publicKey: 'not a key' }, 'publicKey'],
      [{ publicKey: undefined }, 'publicKey'],
      [{ applicationId: undefined }, 'applicationId'],
      [{ authToken: '0123456789abcdef0123456789abcdef' }, 'authToken'],
      [{ accountSid: 'AC0123456789abcdef0123456789abcdef' }, 'accountSid'],
      [{ carrier: 'twilio', accountSid: twilio.accountSid, authToken: twilio.authToken }, 'publicKey'],
    ];
    for (const [change, field] of cases) {
      const input = JSON.parse(JSON.stringify(telnyxConnection(change))) as Record<string, unknown>;
      const rest = await acme.rest.post('/api/carrier-connections', input);
      expect(rest).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT' } });
      const graph = await acme.graphql.run(CreateCarrierConnectionDocument, { input: input as never });
      const error = graph.errors?.[0];
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      const restFields = rest.body.errors.map((each: { field: string }) => each.field);
      expect(restFields).toContain(field);
      expect((error?.extensions?.errors as { field: string }[]).map((each) => each.field)).toEqual(restFields);
    }
    // A key Telnyx refuses (401) is a bad authToken, and nothing is stored.
    telnyx.faults({ rejectCredentials: true });
    const refused = await other.rest.post('/api/carrier-connections', telnyxConnection({ name: 'Refused' }));
    expect(refused).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', errors: [{ field: 'authToken' }] } });
    telnyx.faults({});
    // An update checks the connection's own carrier's forms, on both doors: a Twilio token on Telnyx, a public key on Twilio.
    const update = await acme.rest.put(`/api/carrier-connections/${connectionId}`, { authToken: '0123456789abcdef0123456789abcdef' });
    expect(update).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', errors: [{ field: 'authToken' }] } });
    const onTwilio = await other.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilio.accountSid, authToken: twilio.authToken });
    expect(onTwilio.status).toBe(201);
    const wrongKey = await other.rest.put(`/api/carrier-connections/${onTwilio.body.id}`, { publicKey: telnyx.publicKey });
    expect(wrongKey).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', errors: [{ field: 'publicKey' }] } });
    const graphUpdate = await other.graphql.run(UpdateCarrierConnectionDocument, { id: onTwilio.body.id, input: { publicKey: telnyx.publicKey } });
    expect(graphUpdate.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'publicKey' }] });
    // On Telnyx, a new TeXML Application is taken and shown.
    const moved = await acme.rest.put(`/api/carrier-connections/${connectionId}`, { applicationId: '2000000000000000002' });
    expect(moved).toMatchObject({ status: 200, body: { applicationId: '2000000000000000002' } });
    expect((await acme.rest.put(`/api/carrier-connections/${connectionId}`, { applicationId: APPLICATION_ID })).status).toBe(200);
  });

  it('is another organization’s 404 on both doors', async () => {
    expect((await other.rest.get(`/api/carrier-connections/${connectionId}`)).status).toBe(404);
    expect((await other.graphql.run(CarrierConnectionDocument, { id: connectionId })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await other.rest.put(`/api/carrier-connections/${connectionId}`, { name: 'Mine' })).status).toBe(404);
    expect((await other.rest.post('/api/phone-numbers', { number: randomNumber(), carrierConnectionId: connectionId })).status).toBe(404);
    // The other organization connects the same account on the GraphQL door: a connection of its own, the key again not shown.
    const { createCarrierConnection: own } = await other.graphql.ok(CreateCarrierConnectionDocument, {
      input: telnyxConnection({ carrier: 'telnyx' }) as never,
    });
    expect(own).toMatchObject({ carrier: 'telnyx', authTokenLast4: telnyx.apiKey.slice(-4), publicKey: telnyx.publicKey, applicationId: APPLICATION_ID });
    expect(own.id).not.toBe(connectionId);
    expect(JSON.stringify(own)).not.toContain(telnyx.apiKey);
    expect((await acme.rest.get(`/api/carrier-connections/${own.id}`)).status).toBe(404);
  });
});

describe('an inbound Telnyx call', () => {
  /** A TeXML callback to one of the connection's routes, signed as the fake Telnyx signs (or not at all). */
  async function post(path: string, fields: Record<string, string>, signing: 'signed' | 'unsigned' | 'old' = 'signed') {
    const body = new URLSearchParams(fields).toString();
    const headers =
      signing === 'unsigned'
        ? { 'content-type': 'application/x-www-form-urlencoded' }
        : telnyx.signedHeaders(body, signing === 'old' ? Math.floor(Date.now() / 1000) - 600 : undefined);
    const res = await fetch(`${app.baseUrl}/telephony/telnyx/${connectionId}/${path}`, { method: 'POST', headers, body });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }

  it('is answered with TeXML when signed; status callbacks move the call; unsigned, forged or old webhooks are refused with 403 and change nothing', async () => {
    const agentId = await createVoiceAgent(acme, { name: 'Telnyx echo' });
    const number = randomNumber();
    const created = await acme.rest.post('/api/phone-numbers', { number, carrierConnectionId: connectionId, inboundAgentId: agentId });
    expect(created.status).toBe(201);
    const callSid = `v3:${randomBytes(18).toString('base64url')}`;
    const fields = { AccountSid: telnyx.accountSid, CallSid: callSid, From: '+15557770000', To: number, CallStatus: 'ringing', Direction: 'inbound' };

    for (const signing of ['unsigned', 'old'] as const) expect((await post('inbound', fields, signing)).status).toBe(403);
    telnyx.faults({ forgeSignatures: true });
    expect((await post('inbound', fields)).status).toBe(403);
    telnyx.faults({});
    expect(await app.sql('select id from calls where carrier_call_id = ?', [callSid])).toEqual([]);

    const answer = await post('inbound', fields);
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/text\/xml/);
    expect(answer.text).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?><Response>.*<Gather input="speech dtmf" action="[^"]+\/telephony\/telnyx\/[^"]+\/gather\?callId=/,
    );
    const [call] = await app.sql<{ id: string }>('select id from calls where carrier_call_id = ?', [callSid]);
    const inbound = (await acme.rest.get(`/api/calls/${call!.id}`)).body;
    expect(inbound).toMatchObject({ direction: 'inbound', carrier: 'telnyx', carrierConnectionId: connectionId, to: number, from: '+15557770000' });

    // A forged status callback changes nothing; Telnyx's signed one ends the call.
    const completed = { ...fields, CallStatus: 'completed', CallDuration: '9', Timestamp: new Date().toISOString() };
    expect((await post(`status?callId=${call!.id}`, completed, 'unsigned')).status).toBe(403);
    expect((await acme.rest.get(`/api/calls/${call!.id}`)).body.status).not.toBe('completed');
    // As the TeXML Application's status callback sends it: no callId, the CallSid names the inbound call.
    expect((await post('status', completed)).status).toBe(200);
    expect((await acme.rest.get(`/api/calls/${call!.id}`)).body).toMatchObject({ status: 'completed', durationSeconds: 9 });
    expect((await other.rest.get(`/api/calls/${call!.id}`)).status).toBe(404);
  });
});

/** One carrier's side of the same call: its connection in the organization, and what its double's caller heard. */
interface CarrierScenario {
  kind: 'twilio' | 'telnyx';
  connect(): Promise<string>;
  script(turns: string[]): void;
  heard(to: string): { heard: string[]; hungUp: boolean } | undefined;
  carrierCallId: RegExp;
}

const SCENARIOS: CarrierScenario[] = [
  {
    kind: 'twilio',
    connect: async () => {
      const created = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilio.accountSid, authToken: twilio.authToken });
      expect(created.status).toBe(201);
      return created.body.id;
    },
    script: (turns) => twilio.script(() => ({ outcome: 'answered', durationSeconds: 11, stepMs: 5, turns })),
    heard: (to) => twilio.calls().find((call) => call.to === to),
    carrierCallId: /^CA[0-9a-f]{32}$/,
  },
  {
    kind: 'telnyx',
    connect: async () => connectionId,
    script: (turns) => telnyx.script(() => ({ outcome: 'answered', durationSeconds: 11, turns })),
    heard: (to) => telnyx.calls().find((call) => call.to === to),
    carrierCallId: /^v3:/,
  },
];

describe.each(SCENARIOS)('the same flow call placed on $kind', (scenario) => {
  it('says, asks, lets the agent answer and ends: what the caller heard, the status callbacks and the call record', async () => {
    const agentId = await createVoiceAgent(acme, { name: `Flow agent on ${scenario.kind}` });
    const flow = await acme.rest.post('/api/call-flows', {
      name: `Appointments on ${scenario.kind}`,
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'greet', type: 'say', label: 'Hello, this is Acme Dental.', agentId },
        { id: 'ask', type: 'ask', label: 'How can I help you?', agentId },
        { id: 'bye', type: 'say', label: 'Thank you, goodbye.' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'start', to: 'greet', condition: 'answered' },
        { from: 'greet', to: 'ask' },
        { from: 'ask', to: 'bye', condition: 'said:goodbye' },
        { from: 'bye', to: 'end' },
      ],
    });
    expect(flow.status).toBe(201);
    const number = randomNumber();
    expect((await acme.rest.post('/api/phone-numbers', { number, carrierConnectionId: await scenario.connect() })).status).toBe(201);
    scenario.script(['No, goodbye']);
    const refusedBefore = telnyx.refusals().length;
    const to = randomNumber();
    const placed = await acme.rest.post('/api/calls', { to, flowId: flow.body.id, from: number });
    expect(placed).toMatchObject({ status: 201, body: { carrier: scenario.kind, status: 'queued' } });

    const ended = await callOnceItIs(placed.body.id, isFinal, `the ${scenario.kind} call’s end`);
    expect(ended).toMatchObject({ status: 'completed', outcome: 'answered', durationSeconds: 11, reachedNodeIds: ['start', 'greet', 'ask', 'bye', 'end'] });
    expect(ended.carrierCallId).toMatch(scenario.carrierCallId);
    const line = scenario.heard(to)!;
    expect(line.heard).toEqual(['Hello, this is Acme Dental.', 'How can I help you?', 'One moment.', 'Echo: No, goodbye', 'Thank you, goodbye.']);
    expect(line.hungUp).toBe(true);
    // Nothing the gateway sent broke Telnyx's published schema.
    expect(telnyx.refusals().slice(refusedBefore)).toEqual([]);
  });
});

describe('a campaign on Telnyx', () => {
  it('activates with a Telnyx caller ID and calls its audience', async () => {
    const audience = await createAudience(acme, 2);
    const flow = await acme.rest.post('/api/call-flows', FLOW);
    expect(flow.status).toBe(201);
    const number = await acme.rest.post('/api/phone-numbers', { number: randomNumber(), carrierConnectionId: connectionId });
    const program = await acme.rest.post('/api/programs', {
      name: 'Telnyx reminders',
      kind: 'campaign',
      flowId: flow.body.id,
      audienceId: audience.id,
      carrier: 'telnyx',
      fromNumberId: number.body.id,
      retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
    });
    expect(program.status).toBe(201);
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);

    telnyx.script(() => ({ outcome: 'answered', durationSeconds: 5 }));
    const refusedBefore = telnyx.refusals().length;
    const execution = await acme.rest.post(`/api/programs/${program.body.id}/executions`);
    expect((await acme.rest.post(`/api/executions/${execution.body.id}/start`)).status).toBe(200);
    const done = await waitForExecution(acme, execution.body.id, (value) => value.status === 'completed');
    expect(done).toMatchObject({ status: 'completed' });
    const calls = (await acme.rest.get(`/api/calls?executionId=${execution.body.id}`)).body.data as Record<string, any>[];
    expect(calls).toHaveLength(2);
    for (const call of calls)
      expect(call).toMatchObject({ carrier: 'telnyx', status: 'completed', outcome: 'answered', carrierCallId: expect.stringMatching(/^v3:/) });
    expect(telnyx.refusals().slice(refusedBefore)).toEqual([]);
  });
});

describe('voicemail after the beep on Telnyx', () => {
  it('asks for detection in the background, leaves the message once a machine’s greeting ends (UpdateCall with TeXML), and leaves a person alone', async () => {
    const audience = await createAudience(acme, 2);
    const phones = await app.sql<{ id: string; phone: string; name: string }>('select id, phone, name from contacts where id in (?, ?)', audience.contactIds);
    const machine = phones.find((row) => row.id === audience.contactIds[0])!;
    const person = phones.find((row) => row.id === audience.contactIds[1])!;
    const flow = await acme.rest.post('/api/call-flows', FLOW);
    const number = await acme.rest.post('/api/phone-numbers', { number: randomNumber(), carrierConnectionId: connectionId });
    const program = await acme.rest.post('/api/programs', {
      name: 'Telnyx voicemail',
      kind: 'campaign',
      flowId: flow.body.id,
      audienceId: audience.id,
      carrier: 'telnyx',
      fromNumberId: number.body.id,
      voicemail: { message: 'Hi {{contact.name}}, this is {{organization.name}}. Please call us back.' },
    });
    expect(program.status).toBe(201);
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
    telnyx.script((to) =>
      to === machine.phone
        ? { outcome: 'voicemail', answeredBy: ['machine_start', 'machine_end_beep'], durationSeconds: 20 }
        : { outcome: 'answered', durationSeconds: 5 },
    );
    const refusedBefore = telnyx.refusals().length;
    const execution = await acme.rest.post(`/api/programs/${program.body.id}/executions`);
    expect((await acme.rest.post(`/api/executions/${execution.body.id}/start`)).status).toBe(200);
    await waitForExecution(acme, execution.body.id, (value) => value.status === 'completed');
    await telnyx.settled();

    const calls = (await acme.rest.get(`/api/calls?executionId=${execution.body.id}`)).body.data as Record<string, any>[];
    const byPhone = new Map(calls.map((call) => [call.to, call]));
    expect(byPhone.get(machine.phone)).toMatchObject({ carrier: 'telnyx', outcome: 'voicemail_left', answeredBy: 'machine' });
    expect(byPhone.get(person.phone)).toMatchObject({ carrier: 'telnyx', outcome: 'answered', answeredBy: 'human' });
    const machineLine = telnyx.calls().find((call) => call.to === machine.phone)!;
    const personLine = telnyx.calls().find((call) => call.to === person.phone)!;
    // Detection in the background: the answer URL was asked at once, the verdicts posted to their own signed callback.
    expect(machineLine.machineDetection).toBe('DetectMessageEnd');
    expect(machineLine.verdictCallback).toMatch(new RegExp(`/telephony/telnyx/${connectionId}/amd\\?`));
    expect(machineLine.verdicts).toEqual([
      { answeredBy: 'machine_start', status: 200 },
      { answeredBy: 'machine_end_beep', status: 200 },
    ]);
    // The greeting's end replaced what the call did with the message, then a hang-up.
    expect(machineLine.documents.at(-1)).toMatchObject({ url: 'UpdateCall' });
    expect(machineLine.heard.at(-1)).toBe(`Hi ${machine.name}, this is Acme Telnyx. Please call us back.`);
    expect(machineLine.hungUp).toBe(true);
    // A person: nothing replaced, the flow's answered branch heard.
    expect(personLine.verdicts).toEqual([{ answeredBy: 'human', status: 200 }]);
    expect(personLine.documents.some((document) => document.url === 'UpdateCall')).toBe(false);
    expect(personLine.heard).toEqual(['Hello from Acme, this is a reminder of your appointment tomorrow.']);
    expect(telnyx.refusals().slice(refusedBefore)).toEqual([]);

    // A verdict not signed with the account's key changes nothing: 403.
    const forged = new URLSearchParams({ AccountSid: telnyx.accountSid, CallSid: personLine.sid, AnsweredBy: 'machine_end_beep' }).toString();
    const url = `${app.baseUrl}/telephony/telnyx/${connectionId}/amd?callId=${byPhone.get(person.phone)!.id}`;
    expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: forged })).status).toBe(403);
    telnyx.faults({ forgeSignatures: true });
    expect((await fetch(url, { method: 'POST', headers: telnyx.signedHeaders(forged), body: forged })).status).toBe(403);
    expect((await acme.rest.get(`/api/calls/${byPhone.get(person.phone)!.id}`)).body).toMatchObject({ outcome: 'answered', answeredBy: 'human' });
  });
});

describe('a speech-to-speech call over Telnyx media streaming', () => {
  it('streams the caller’s audio to the provider and the agent’s back in Telnyx’s frames, and stores both sides', async () => {
    const agent = await acme.rest.post('/api/agents', {
      name: 'Ada on Telnyx',
      instructions: 'You are Ada. Keep answers short.',
      modelConfig: { model: 'openai/gpt-realtime' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' },
      firstMessageMode: 'wait_for_caller',
      transferDestinations: [{ name: 'Front desk', number: '+14155550100' }],
    });
    expect(agent.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    let hangUp!: () => void;
    const held = new Promise<void>((resolve) => (hangUp = resolve));
    telnyx.script(() => ({ outcome: 'answered', durationSeconds: 4, holdUntil: held }));
    const refusedBefore = telnyx.refusals().length;
    // Its transfer_call hands the call on as on Twilio: the live call is updated to <Dial action> the number (the rest in telnyx-transfer.test.ts).
    realtime.script.push({
      caller: 'Can I come by tomorrow?',
      reply: [{ text: 'Yes, we open at nine.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: 'Front desk' } }],
    });
    const to = randomNumber();
    // The provider's session is opened while Telnyx fetches the answer, before the stream (issue #45).
    const session = realtime.nextSession();
    const placed = await acme.rest.post('/api/calls', { to, agentId: agent.body.id, from });
    expect(placed.status).toBe(201);

    // The answer's TeXML connects the call to its own stream URL; Telnyx opens it unsigned.
    const documents = await eventually(
      () => telnyx.calls().find((call) => call.to === to)?.documents ?? [],
      (list) => list.some((document) => document.texml.includes('<Stream')),
      { what: 'the stream TeXML' },
    );
    const texml = documents.find((document) => document.texml.includes('<Stream'))!.texml;
    const url = /<Stream url="([^"]+)"/.exec(texml)![1]!.replaceAll('&amp;', '&');
    expect(url).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/telephony/telnyx/${connectionId}/media/${placed.body.id}/`));
    expect(texml).toContain('bidirectionalMode="rtp"');
    const call = telnyx.calls().find((each) => each.to === to)!;
    // The URL of another call (a guessed nonce) opens nothing.
    expect(await TelnyxMediaCaller.open(url.replace(/\/[^/]+$/, '/guessed'))).toEqual({ refused: 403 });

    const caller = await TelnyxMediaCaller.open(url);
    if (!(caller instanceof TelnyxMediaCaller)) throw new Error(`refused: ${caller.refused}`);
    caller.start(call.sid, placed.body.id);
    const opened = await session;
    await opened.waitFor('session.update');
    const speech = callerSpeech(600, 400);
    await caller.sendAudio(speech);
    // The double speaks a frame per word of its reply: five.
    await caller.waitFor(() => caller.events('media').length >= 5, 'the agent’s reply');
    expect(opened.audio().equals(speech)).toBe(true);
    // Telnyx's own frames back: media with a payload only, no Twilio streamSid.
    for (const frame of caller.events('media')) expect(Object.keys(frame).sort()).toEqual(['event', 'media']);
    expect(caller.problems).toEqual([]);
    const row = await callOnceItIs(placed.body.id, (value) => Boolean(value.conversationId), 'the conversation link');
    const messages = await eventually(
      async () => (await acme.rest.get(`/api/conversations/${row.conversationId}/messages?limit=10`)).body.data as { role: string; content: string }[],
      (list) => list.length === 3,
      { what: 'the transcript' },
    );
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Can I come by tomorrow?'],
      ['assistant', 'Yes, we open at nine.'],
      ['assistant', '[the call was transferred to Front desk]'],
    ]);
    // The agent's stream ends once Telnyx took the transfer; the dial's signed report is recorded, and answered with a hang-up.
    expect((await caller.closed).code).toBe(1000);
    expect(call.updates[0]!.Texml).toContain(`<Dial action="${app.baseUrl}/telephony/telnyx/${connectionId}/dial?callId=${placed.body.id}" method="POST">`);
    const transferred = await callOnceItIs(placed.body.id, (value) => value.transfer?.dialStatus === 'completed', 'the dial’s report');
    expect(transferred.transfer).toMatchObject({ destinationName: 'Front desk', destination: '+14155550100', mode: 'cold' });
    hangUp();
    const ended = await callOnceItIs(placed.body.id, isFinal, 'the sts call’s end');
    expect(ended).toMatchObject({ status: 'completed', carrier: 'telnyx', carrierCallId: call.sid });
    expect(realtime.problems).toEqual([]);
    expect(telnyx.refusals().slice(refusedBefore)).toEqual([]);
  });
});
