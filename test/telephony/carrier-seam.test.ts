import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { testRunner } from '../runner/fixtures.js';
import { createVoiceAgent } from '../voice/fixtures.js';
import { createAudience, createFlow } from '../programs/fixtures.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import {
  CallWithRelationsDocument,
  CarrierConnectionDocument,
  CarriersDocument,
  CreateCarrierConnectionDocument,
  CreateCarrierProgramDocument,
} from '../generated/graphql.js';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { callerSpeech } from '../support/media-stream-client.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { PARROT, ParrotPhone, parrotModule, sign } from './throwaway-carrier.js';

// The seam, proved: a carrier written in the test tree alone (throwaway-carrier.ts: its own
// signature, form fields, JSON call control and media frames), registered through the gateway's
// seams (`carrierModules`), places a flow call and answers an inbound one on the real doors, with
// the same call records as Twilio's. It is a kind of its own, `parrot`: its connection is made through
// the public API with its own credential formats, its routes are `/telephony/parrot/…`, and nothing
// of Twilio's or Telnyx's code runs.

const ACCOUNT_SID = `perch-${String(Math.floor(Math.random() * 90_000_000) + 10_000_000)}`;
const AUTH_TOKEN = randomBytes(24).toString('hex');

let phone: ParrotPhone;
let realtime: FakeRealtime;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let runner: CampaignRunner;
let connectionId: string;

const randomNumber = () => `+1415${String(Math.floor(Math.random() * 9_000_000) + 1_000_000)}`;
const callOnceItIs = (id: string, done: (call: Record<string, any>) => boolean, what: string) =>
  eventually(async () => (await acme.rest.get(`/api/calls/${id}`)).body as Record<string, any>, done, { what, everyMs: 20 });
const isFinal = (call: Record<string, any>) => !['queued', 'ringing', 'in_progress'].includes(call.status);

beforeAll(async () => {
  phone = new ParrotPhone(() => AUTH_TOKEN);
  realtime = await startFakeRealtime();
  app = await startTestApp(
    // Nothing listens at this Twilio address: a request sent to Twilio would fail the test.
    {
      telephony: { twilioApiBaseUrl: 'http://127.0.0.1:9', credentialsKey: randomBytes(32), publicUrl: undefined },
      providers: { ...loadConfig({}).providers, openaiApiKey: 'sk-test-parrot', openaiRealtimeUrl: realtime.url },
    },
    undefined,
    { carrierModules: [parrotModule(phone)] },
  );
  app.config.telephony.publicUrl = app.baseUrl;
  acme = await app.organization('Acme Parrot');
  other = await app.organization('Other Parrot');
  await acme.grantCredits(10);
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Parrot', carrier: PARROT, accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  expect(connection).toMatchObject({ status: 201, body: { carrier: PARROT, accountSid: ACCOUNT_SID, authTokenLast4: AUTH_TOKEN.slice(-4) } });
  connectionId = connection.body.id;
  runner = testRunner(app, { intervalMs: 20 });
  runner.start();
}, 60_000);

afterAll(async () => {
  await phone?.settled();
  await runner?.stop();
  await app?.close();
  await realtime?.close();
});

describe('a throwaway carrier registered through the seam', () => {
  it('is a connection of its own kind on both doors, its fields in its own formats; a kind no module serves is 400, never Twilio', async () => {
    const graph = await acme.graphql.run(CarrierConnectionDocument, { id: connectionId });
    expect(graph.data?.carrierConnection).toMatchObject({ carrier: PARROT, accountSid: ACCOUNT_SID });
    expect(JSON.stringify(graph)).not.toContain(AUTH_TOKEN);
    const refusedOnBoth = async (input: Record<string, unknown>) => {
      const rest = await other.rest.post('/api/carrier-connections', input);
      expect(rest).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT' } });
      const gql = await other.graphql.run(CreateCarrierConnectionDocument, { input: input as never });
      expect(gql.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: rest.body.errors });
      return rest.body.errors as { field: string; message: string }[];
    };
    const kinds = 'carrier must be one of the following values: twilio, telnyx, parrot';
    // A kind no module serves, even with Twilio's fields: refused naming the kinds, not taken as Twilio.
    const twilioFields = { accountSid: `AC${'a'.repeat(32)}`, authToken: 'b'.repeat(32) };
    expect(await refusedOnBoth({ name: 'Vonage', carrier: 'vonage', ...twilioFields })).toEqual([{ field: 'carrier', message: kinds }]);
    // Twilio's formats on a Parrot connection are Parrot's to refuse, in its own words; a field Parrot takes none of is refused.
    expect(await refusedOnBoth({ name: 'Parrot', carrier: PARROT, ...twilioFields })).toEqual([
      { field: 'accountSid', message: 'accountSid must be a Parrot perch: perch- followed by 8 digits' },
      { field: 'authToken', message: 'authToken must be a Parrot key: 48 hexadecimal digits (lowercase)' },
    ]);
    expect(await refusedOnBoth({ name: 'Parrot', carrier: PARROT, accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, applicationId: 'app-1' })).toEqual([
      { field: 'applicationId', message: 'applicationId is not a field of a parrot connection' },
    ]);
    // Twilio's Webhooks Rule key is Twilio's field: a Parrot connection takes none.
    expect(await refusedOnBoth({ name: 'Parrot', carrier: PARROT, accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, webhookKey: 'k'.repeat(16) })).toEqual([
      { field: 'webhookKey', message: 'webhookKey is not a field of a parrot connection' },
    ]);
    // An update checks the connection's own carrier's format.
    const update = await acme.rest.put(`/api/carrier-connections/${connectionId}`, { authToken: 'b'.repeat(32) });
    expect(update).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'authToken', message: 'authToken must be a Parrot key: 48 hexadecimal digits (lowercase)' }] },
    });
    expect((await other.rest.get('/api/carrier-connections')).body.meta.total).toBe(0);
  });

  it('is listed with its own connection form on both doors (what the console’s form is made from), the built-in carriers beside it', async () => {
    const rest = await other.rest.get('/api/carriers');
    expect(rest.status).toBe(200);
    const graph = await other.graphql.run(CarriersDocument, {});
    expect(graph.data?.carriers).toEqual(rest.body);
    expect((rest.body as { kind: string }[]).map((carrier) => carrier.kind)).toEqual(['parrot', 'telnyx', 'twilio']);
    expect(rest.body[0]).toEqual({
      kind: PARROT,
      label: parrotModule(phone).label,
      connectionFields: [
        { name: 'accountSid', label: 'Perch', hint: 'perch- followed by 8 digits', secret: false, required: true },
        { name: 'authToken', label: 'Parrot key', hint: '48 hexadecimal digits', secret: true, required: true },
      ],
    });
    // Each built-in carrier's form is its module's: Twilio's optional Webhooks Rule key, Telnyx's public key and application.
    const names = (kind: string) =>
      (rest.body as { kind: string; connectionFields: { name: string; required: boolean }[] }[])
        .find((carrier) => carrier.kind === kind)!
        .connectionFields.map((field) => `${field.name}${field.required ? '' : '?'}`);
    expect(names('twilio')).toEqual(['accountSid', 'authToken', 'webhookKey?']);
    expect(names('telnyx')).toEqual(['accountSid', 'authToken', 'publicKey', 'applicationId']);
    // Only with a key: the same 401 on both doors.
    expect((await fetch(`${app.baseUrl}/api/carriers`)).status).toBe(401);
  });

  it('is a carrier a program can be placed on, on both doors; web and a kind no module serves are not', async () => {
    const from = (await acme.rest.post('/api/phone-numbers', { number: randomNumber(), carrierConnectionId: connectionId })).body.id as string;
    const input = async (carrier: string) => ({
      name: 'Reminders on Parrot',
      kind: 'campaign',
      flowId: await createFlow(acme),
      audienceId: (await createAudience(acme, 1)).id,
      carrier,
      fromNumberId: from,
    });
    const rest = await acme.rest.post('/api/programs', await input(PARROT));
    expect(rest).toMatchObject({ status: 201, body: { carrier: PARROT, fromNumberId: from } });
    const { createProgram } = await acme.graphql.ok(CreateCarrierProgramDocument, { input: (await input(PARROT)) as never });
    expect(createProgram).toMatchObject({ carrier: PARROT, fromNumber: { id: from, carrierConnection: { id: connectionId } } });
    const kinds = 'carrier must be one of the following values: simulator, twilio, telnyx, parrot';
    for (const carrier of ['web', 'vonage']) {
      const refused = await acme.rest.post('/api/programs', await input(carrier));
      expect(refused).toMatchObject({ status: 400, body: { code: 'BAD_USER_INPUT', errors: [{ field: 'carrier', message: kinds }] } });
    }
    // GraphQL's enum has web (a call's carrier), so it reaches the same check; a kind it lacks is refused by the enum itself.
    const web = await acme.graphql.run(CreateCarrierProgramDocument, { input: (await input('web')) as never });
    expect(web.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'carrier', message: kinds }] });
    const vonage = await acme.graphql.run(CreateCarrierProgramDocument, { input: (await input('vonage')) as never });
    expect(vonage.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'carrier' }] });
  });

  it('places a flow call: its signed answer gets its own call control, the caller’s words go through its fields, its report ends the call', async () => {
    const agentId = await createVoiceAgent(acme, { name: 'Parrot flow agent' });
    const flow = await acme.rest.post('/api/call-flows', {
      name: 'Appointments on Parrot',
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
    const from = randomNumber();
    expect((await acme.rest.post('/api/phone-numbers', { number: from, carrierConnectionId: connectionId })).status).toBe(201);
    phone.turns = ['No, goodbye'];
    const to = randomNumber();
    const placed = await acme.rest.post('/api/calls', { to, flowId: flow.body.id, from });
    expect(placed).toMatchObject({ status: 201, body: { carrier: PARROT, status: 'queued' } });

    const ended = await callOnceItIs(placed.body.id, isFinal, 'the Parrot call’s end');
    const call = phone.calls.find((each) => each.to === to)!;
    expect(ended).toMatchObject({
      status: 'completed',
      outcome: 'answered',
      answeredBy: 'human',
      durationSeconds: 7,
      carrierCallId: call.carrierCallId,
      reachedNodeIds: ['start', 'greet', 'ask', 'bye', 'end'],
    });
    expect(call.heard).toEqual(['Hello, this is Acme Dental.', 'How can I help you?', 'One moment.', 'Echo: No, goodbye', 'Thank you, goodbye.']);
    expect(call.hungUp).toBe(true);
    // What the gateway answered was Parrot's own steps, never TwiML.
    expect(JSON.stringify(call.documents)).not.toMatch(/<Response|<Say/);
    const conversation = await eventually(
      async () => (await acme.rest.get(`/api/conversations/${ended.conversationId}/messages?limit=10`)).body.data as { role: string; content: string }[],
      (list) => list.some((message) => message.role === 'user'),
      { what: 'the transcript' },
    );
    expect(conversation.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['No, goodbye']);
    expect((await other.rest.get(`/api/calls/${placed.body.id}`)).status).toBe(404);
    // GraphQL's enum of carriers is the gateway's modules: it names the call's carrier too.
    const graph = await acme.graphql.run(CallWithRelationsDocument, { id: placed.body.id });
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.call).toMatchObject({ carrier: PARROT, status: 'completed' });
  });

  it('answers an inbound call signed its way, names its numbers from its own fields, and refuses one signed otherwise with 403', async () => {
    const agentId = await createVoiceAgent(acme, { name: 'Parrot inbound agent' });
    const number = randomNumber();
    expect((await acme.rest.post('/api/phone-numbers', { number, carrierConnectionId: connectionId, inboundAgentId: agentId })).status).toBe(201);
    const base = `${app.baseUrl}/telephony/${PARROT}/${connectionId}`;
    // Signed with another key: refused before any work, no call recorded.
    const forged = await phone.post(`${base}/inbound`, { call: 'parrot-forged', caller: '+15557770000', callee: number, state: 'talking' }, 'f'.repeat(32));
    expect(forged.status).toBe(403);
    expect(await app.sql('select id from calls where carrier_call_id = ?', ['parrot-forged'])).toEqual([]);

    phone.turns = ['What time do you open?'];
    const call = await phone.ring(`${base}/inbound`, `${base}/status`, '+15557770000', number);
    expect(call.heard).toContain('Echo: What time do you open?');
    const [row] = await app.sql<{ id: string }>('select id from calls where carrier_call_id = ?', [call.carrierCallId]);
    const inbound = await callOnceItIs(row!.id, isFinal, 'the inbound call’s end');
    expect(inbound).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      durationSeconds: 7,
      from: '+15557770000',
      to: number,
      carrierConnectionId: connectionId,
    });
  });

  it('carries a speech-to-speech call over its own media frames: its signed upgrade, the caller’s audio in, the agent’s audio out', async () => {
    const created = await acme.rest.post('/api/agents', {
      name: 'Parrot live agent',
      instructions: 'You answer callers.',
      modelConfig: { model: 'openai/gpt-realtime' },
      voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' },
      firstMessageMode: 'wait_for_caller',
    });
    expect(created.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
    const number = randomNumber();
    expect((await acme.rest.post('/api/phone-numbers', { number, carrierConnectionId: connectionId, inboundAgentId: created.body.id })).status).toBe(201);
    realtime.script.push({ caller: 'Do you open on Sunday?', reply: [{ text: 'Yes, from ten to four.' }] });
    const base = `${app.baseUrl}/telephony/${PARROT}/${connectionId}`;
    const carrierCallId = `parrot-live-${randomBytes(6).toString('hex')}`;
    // The provider's session is opened while the answer is made (prepared before the stream, issue #45),
    // or, where it was not prepared, when the stream starts: waited for from before the answer in either case.
    const next = realtime.nextSession();
    const answer = await phone.post(`${base}/inbound`, { call: carrierCallId, caller: '+15557770001', callee: number, state: 'talking' });
    expect(answer.status).toBe(200);
    // Its call control names the stream in its own step, at its own route.
    const media = answer.steps.find((step): step is { media: string } => 'media' in step)?.media;
    expect(media).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/telephony/${PARROT}/${connectionId}/`));
    const [row] = await app.sql<{ id: string }>('select id from calls where carrier_call_id = ?', [carrierCallId]);
    // Unsigned, or signed with another key: refused before any frame.
    const refused = await new Promise<number>((resolve) => {
      const socket = new WebSocket(media!, { headers: { 'x-parrot-signature': sign('f'.repeat(48), media!, '') } });
      socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.once('open', () => resolve(101));
      socket.once('error', () => undefined);
    });
    expect(refused).toBe(403);

    const socket = new WebSocket(media!, { headers: { 'x-parrot-signature': sign(AUTH_TOKEN, media!, '') } });
    const received: Record<string, string>[] = [];
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, string>;
      received.push(message);
      // Parrot plays at once: every mark is told back as played.
      if (message.t === 'tellme') socket.send(JSON.stringify({ t: 'played', name: message.name }));
    });
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    socket.send(JSON.stringify({ t: 'hello', stream: 'parrot-stream-1', call: carrierCallId, ours: row!.id }));
    const session = await next;
    await session.waitFor('session.update');
    const speech = callerSpeech(600, 400);
    for (let offset = 0; offset < speech.length; offset += 160)
      socket.send(JSON.stringify({ t: 'sound', b64: speech.subarray(offset, offset + 160).toString('base64') }));
    const stored = await eventually(
      async () => (await acme.rest.get(`/api/calls/${row!.id}`)).body as Record<string, any>,
      (call) => Boolean(call.conversationId),
      { what: 'the call’s conversation', everyMs: 20 },
    );
    const messages = await eventually(
      async () => (await acme.rest.get(`/api/conversations/${stored.conversationId}/messages`)).body.data as { role: string; content: string }[],
      (data) => data?.length === 2,
      { what: 'both turns stored', everyMs: 20 },
    );
    expect(messages.map(({ role, content }) => ({ role, content }))).toEqual([
      { role: 'user', content: 'Do you open on Sunday?' },
      { role: 'assistant', content: 'Yes, from ten to four.' },
    ]);
    // The agent's audio went out in Parrot's frames; nothing in another carrier's words.
    expect(received.filter((message) => message.t === 'sound').length).toBeGreaterThan(0);
    expect(received.every((message) => ['sound', 'tellme', 'flush'].includes(message.t!))).toBe(true);
    expect(realtime.problems).toEqual([]);
    socket.send(JSON.stringify({ t: 'bye' }));
    socket.close();
    expect((await phone.post(`${base}/status`, { call: carrierCallId, state: 'done', seconds: '9' })).status).toBe(200);
    await callOnceItIs(row!.id, isFinal, 'the live call’s end');
    expect((await other.rest.get(`/api/calls/${row!.id}`)).status).toBe(404);
  });
});
