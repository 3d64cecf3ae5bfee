import { postAsTwilio } from '../support/twilio-webhook.js';
import { CreateTransferAgentDocument, EventsDocument, TransferCallDocument, UpdateTransferAgentDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type CallScript, type FakeCall, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeRealtime, type FakeRealtime, type FakeRealtimeSession } from '../support/fake-openai-realtime.js';
import { startFakeDeepgram, type FakeDeepgram } from '../support/fake-deepgram.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { startTwilioApp } from '../telephony/fixtures.js';
import { campaignWithExecution } from '../telephony/call-seed.js';
import { createAudience } from '../programs/fixtures.js';
import { eventually, stsHelpers } from './sts-fixtures.js';
import { TalkSocket } from '../web-calls/talk-socket.js';
import { TestDeadlines } from '../helpers/deadlines.js';
import { answeredColdTransfer, BILLING, FRONT, SALES, transferOf as transferOfCall } from './transfer-fixtures.js';

// The cold transfer (issue #44) on a live Twilio call, through the real doors: an agent lists
// transferDestinations; on sts and streaming calls its model is offered transfer_call (an enum of
// their names); the gateway updates the live call (UpdateCall, validated by the Twilio double against
// Twilio's published UpdateCall, its TwiML against the TwiML reference) to say a line and <Dial> the
// destination, whose signed <Dial action> report is recorded on the call. The agent's stream ends; the
// call shows its transfer on REST, GraphQL and the CSV, its transcript says so, and call.transferred
// is written. A dial that reaches no one (busy, no-answer, failed, canceled) gives the caller back: the
// report is answered with <Connect><Stream> again, the agent's new session is told why and says so, and
// the call goes on. PGlite, and PostgreSQL with TEST_DATABASE_URL.

const DEEPGRAM_KEY = 'dg-test-key-transfer';
const ELEVENLABS_KEY = 'xi-test-key-transfer';
const GREETING = 'Hello, this is the Acme line.';
const BLOCKED = { name: 'Old line', number: '+14155550177', description: 'The old support line' };
const DESTINATIONS = [BILLING, FRONT, BLOCKED, SALES];
/** A warm destination whose briefing places the model's summary itself. */
const ORDERS = { name: 'Order desk', number: '+14155550124', description: 'Orders', mode: 'warm', briefing: 'New order. {{summary}} Please take it.' };
/** The hidden policy of the agent whose warm transfers are summarised: it must never reach the person. */
const POLICY = 'Never offer a discount above ten percent.';

let twilioFake: FakeTwilio;
let realtime: FakeRealtime;
let deepgram: FakeDeepgram;
let elevenlabs: FakeElevenLabs;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let stsAgentId: string;
let streamingAgentId: string;
let contactId: string;
let summarizingAgentId: string;
/** A warm transfer's wait for the model's summary ends when a test fires it, never on wall time. */
const deadlines = new TestDeadlines();

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  realtime = await startFakeRealtime();
  deepgram = await startFakeDeepgram({ apiKey: DEEPGRAM_KEY });
  elevenlabs = await startFakeElevenLabs({ apiKey: ELEVENLABS_KEY });
  app = await startTwilioApp(
    twilioFake,
    undefined,
    {
      providers: {
        openaiApiKey: 'sk-test-realtime-key',
        openaiRealtimeUrl: realtime.url,
        deepgramApiKey: DEEPGRAM_KEY,
        deepgramBaseUrl: deepgram.baseUrl,
        elevenlabsApiKey: ELEVENLABS_KEY,
        elevenlabsBaseUrl: elevenlabs.baseUrl,
      },
    },
    { transferSummaryDeadline: deadlines.deadline },
  );
  acme = await app.organization('Acme transfer');
  other = await app.organization('Other transfer');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const agent = async (fields: Record<string, unknown>) => {
    const created = await acme.rest.post('/api/agents', {
      name: 'Receptionist',
      instructions: 'You answer and hand callers on.',
      transferDestinations: DESTINATIONS,
      ...fields,
    });
    expect(created.status).toBe(201);
    expect((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  };
  stsAgentId = await agent({
    modelConfig: { model: 'openai/gpt-realtime' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' },
    firstMessageMode: 'wait_for_caller',
  });
  streamingAgentId = await agent({
    firstMessage: GREETING,
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' },
  });
  summarizingAgentId = await agent({
    firstMessage: GREETING,
    policy: POLICY,
    transferDestinations: [SALES, ORDERS],
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' },
  });
  expect((await acme.rest.post('/api/do-not-call', { phone: BLOCKED.number, note: 'asked not to be called' })).status).toBe(201);
  contactId = (await createAudience(acme, 1)).contactIds[0]!;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await realtime?.close();
  await deepgram?.close();
  await elevenlabs?.close();
  await twilioFake?.close();
});

beforeEach(() => {
  realtime.script.length = 0;
  realtime.problems.length = 0;
  deepgram.clearScript();
  deepgram.problems.length = 0;
  elevenlabs.reset();
  elevenlabs.faults.speed = 4;
  elevenlabs.problems.length = 0;
  twilioFake.faults({});
});

afterEach(() => {
  expect(realtime.problems).toEqual([]);
  expect(deepgram.problems.filter((problem) => problem.kind !== 'handshake')).toEqual([]);
  expect(elevenlabs.problems).toEqual([]);
  expect(twilioFake.twimlProblems()).toEqual([]);
});

const { liveCall, answeredStream, callRow, transcript } = stsHelpers(() => ({ app, twilioFake, acme }));

/** A live call of `agentId` whose media stream is open, and the same call at the Twilio double (adopted: UpdateCall takes it). */
async function openStream(agentId: string, script?: CallScript): Promise<{ callId: string; caller: MediaStreamClient; fake: FakeCall }> {
  const callId = await liveCall({ org: acme, agentId, contactId, connectionId });
  const { url, callSid } = await answeredStream(callId);
  const fake = twilioFake.adopt({ sid: callSid, to: '+14155550199', from: '+14155550000', ...(script ? { script } : {}) });
  const caller = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
  caller.start(callId, callSid);
  return { callId, caller, fake };
}

async function openSts(script?: CallScript): Promise<{ callId: string; caller: MediaStreamClient; fake: FakeCall; session: FakeRealtimeSession }> {
  const next = realtime.nextSession();
  const opened = await openStream(stsAgentId, script);
  const session = await next;
  await session.waitFor('session.update');
  return { ...opened, session };
}

/** The stored transcript once it has `count` messages. */
async function stored(callId: string, count: number) {
  const row = await eventually(
    () => callRow(callId),
    (call) => call.conversation_id !== null,
    'the call’s conversation',
  );
  return transcript(row.conversation_id!, count);
}

/** A transfer's dial report as Twilio would post it for `callId`, signed with `token` (none: unsigned). */
async function postDial(callId: string, fields: Record<string, string>, token: string | null = twilioFake.authToken) {
  const url = `${app.baseUrl}/telephony/twilio/${connectionId}/dial?callId=${callId}`;
  const params = { AccountSid: twilioFake.accountSid, DialCallStatus: 'completed', DialCallDuration: '7', ...fields };
  return postAsTwilio(url, params, token);
}

const transferOf = (callId: string) => transferOfCall(acme, callId);

describe('transfer_call on a speech-to-speech call (OpenAI Realtime)', () => {
  it('is offered with an enum of the destinations’ names, so the model cannot name a number', async () => {
    const { caller, session } = await openSts();
    const tool = (session.config.tools as { name: string; parameters: { properties: Record<string, { enum?: string[] }> } }[]).find(
      (each) => each.name === 'transfer_call',
    );
    expect(tool?.parameters.properties.destination?.enum).toEqual(DESTINATIONS.map((each) => each.name));
    caller.hangUp();
    await caller.closed;
  });

  it('cold: the live call is updated to say the line and <Dial> the number; the stream ends; the dial’s report is recorded; record, transcript and event say so', async () => {
    realtime.script.push({
      caller: 'Can I talk to someone about my invoice?',
      reply: [{ text: 'Of course, one moment.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }],
    });
    const { callId, caller, fake } = await openSts({ outcome: 'answered', dial: { status: 'completed', durationSeconds: 95 } });
    await caller.sendAudio(callerSpeech(600, 400));
    // The agent's stream ends once the carrier took the transfer.
    expect((await caller.closed).code).toBe(1000);
    await eventually(
      async () => fake.dialReports.length,
      (count) => count === 1,
      'the <Dial action> report',
    );
    expect(fake.updates).toHaveLength(1);
    const base = `${app.baseUrl}/telephony/twilio/${connectionId}`;
    expect(fake.updates[0]!.Twiml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="Polly.Joanna">Connecting you to Billing desk.</Say>' +
        `<Dial action="${base}/dial?callId=${callId}" method="POST"><Number>+14155550100</Number></Dial></Response>`,
    );
    expect(fake.heard).toEqual(['Connecting you to Billing desk.']);
    expect(fake.transfers).toEqual([BILLING.number]);
    // The report was signed and taken; its answer hangs up (the agent has left).
    expect(fake.dialReports[0]!.status).toBe(200);
    expect(fake.hungUp).toBe(true);

    const transfer = await eventually(
      () => transferOf(callId),
      (value) => value?.dialStatus === 'completed',
      'the dial’s outcome on the call',
    );
    expect(transfer).toEqual(answeredColdTransfer(BILLING, 95));
    expect((await acme.graphql.ok(TransferCallDocument, { id: callId })).call.transfer).toEqual(transfer);
    expect(await stored(callId, 3)).toEqual([
      { role: 'user', content: 'Can I talk to someone about my invoice?' },
      { role: 'assistant', content: 'Of course, one moment.' },
      { role: 'assistant', content: '[the call was transferred to Billing desk]' },
    ]);
    const events = (await acme.rest.get('/api/events?type=call.transferred&limit=100')).body.data as { payload: Record<string, any> }[];
    const event = events.find((each) => each.payload.id === callId);
    expect(event?.payload.transfer).toMatchObject({ destinationName: BILLING.name, destination: BILLING.number, mode: 'cold' });
    expect(JSON.stringify(event)).not.toContain('policy');
    // Another organization sees neither the call nor its transfer.
    expect((await other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
    expect((await other.graphql.run(TransferCallDocument, { id: callId })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('a destination on the do-not-call list is refused: the model is told, and the call goes on with it', async () => {
    realtime.script.push({
      caller: 'Put me through to the old line.',
      reply: [{ text: 'Let me try.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: BLOCKED.name } }],
      afterTools: (outputs) => [{ text: outputs[0]!.transferred === false ? 'I cannot transfer you there.' : 'Transferred.' }],
    });
    const { callId, caller, fake, session } = await openSts();
    await caller.sendAudio(callerSpeech(600, 400));
    const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
    expect(JSON.parse(output.item.output)).toEqual({ transferred: false, error: expect.stringContaining('do-not-call list') });
    await session.waitFor('response.create');
    // The model's answer is stored once its item is done, while the call goes on.
    expect(await stored(callId, 3)).toEqual([
      { role: 'user', content: 'Put me through to the old line.' },
      { role: 'assistant', content: 'Let me try.' },
      { role: 'assistant', content: 'I cannot transfer you there.' },
    ]);
    expect(caller.heard().length).toBeGreaterThan(3);
    expect(fake.updates).toEqual([]);
    caller.hangUp();
    await caller.closed;
    expect(await transferOf(callId)).toBeNull();
  });

  it.each([500, 400])('the carrier refusing the update (%i): the model is told, the call goes on with the agent, nothing is recorded', async (status) => {
    twilioFake.faults({ updateStatus: status });
    realtime.script.push({
      caller: 'Billing please.',
      reply: [{ text: 'Connecting.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }],
      afterTools: (outputs) => [{ text: outputs[0]!.transferred === false ? 'Sorry, the transfer did not go through.' : 'Done.' }],
    });
    const { callId, caller, fake, session } = await openSts();
    await caller.sendAudio(callerSpeech(600, 400));
    const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
    expect(JSON.parse(output.item.output)).toEqual({ transferred: false, error: expect.stringContaining('the carrier refused the transfer') });
    // Still the agent's stream: its apology is spoken and stored while the call goes on; the caller hangs up, not the gateway.
    expect(await stored(callId, 3)).toEqual([
      { role: 'user', content: 'Billing please.' },
      { role: 'assistant', content: 'Connecting.' },
      { role: 'assistant', content: 'Sorry, the transfer did not go through.' },
    ]);
    await caller.waitFor(() => caller.heard().length > 1, 'the apology');
    expect(fake.updates).toEqual([]);
    caller.hangUp();
    await caller.closed;
    expect(await transferOf(callId)).toBeNull();
    const [events] = await app.sql<{ n: string | number }>(`select count(*) as n from events where type = 'call.transferred' and payload->>'id' = ?`, [callId]);
    expect(Number(events!.n)).toBe(0);
  });
});

describe('transfer_call on a web call (the browser: no carrier to dial with)', () => {
  it('is refused with the reason, the model is told and says so, and the call goes on with the agent; nothing is recorded', async () => {
    await acme.grantCredits(1);
    realtime.script.push({
      caller: 'Put me through to billing.',
      reply: [{ text: 'One moment.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }],
      afterTools: (outputs) => [{ text: outputs[0]!.transferred === false ? 'I cannot transfer a web call, but I can help.' : 'Done.' }],
    });
    const created = await acme.rest.post('/api/web-calls', { agentId: stsAgentId });
    expect(created.status).toBe(201);
    const next = realtime.nextSession();
    const talk = await TalkSocket.open(app.baseUrl, created.body.token as string);
    if (typeof talk === 'number') throw new Error(`the talk socket was refused: ${talk}`);
    try {
      const session = await next;
      await session.waitFor('session.update');
      talk.sendAudio(callerSpeech(600, 400));
      const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
      expect(JSON.parse(output.item.output)).toEqual({ transferred: false, error: 'transfer is not available on this carrier (web)' });
      await talk.until(() => talk.transcript.some((line) => line.text === 'I cannot transfer a web call, but I can help.'));
      expect(talk.transcript).toEqual([
        { role: 'caller', text: 'Put me through to billing.' },
        { role: 'agent', text: 'One moment.' },
        { role: 'agent', text: 'I cannot transfer a web call, but I can help.' },
      ]);
      const [call] = await app.sql<{ id: string; channel: string; status: string }>(
        'select id, channel, status from calls where organization_id = ? and channel = ? order by created_at desc limit 1',
        [acme.organizationId, 'web'],
      );
      expect(call).toMatchObject({ channel: 'web', status: 'in_progress' });
      expect(await transferOf(call!.id)).toBeNull();
      expect((await other.rest.get(`/api/calls/${call!.id}`)).status).toBe(404);
    } finally {
      talk.close();
      await talk.closed;
    }
  });
});

/** The media stream the call's `<Dial action>` answer reconnected (`<Connect><Stream>`), opened as Twilio opens it. */
async function reopened(callId: string, fake: FakeCall, count = 1, from = `/dial?callId=${callId}`): Promise<MediaStreamClient> {
  await eventually(
    async () => fake.streams.length,
    (streams) => streams === count,
    'the <Connect><Stream> the dial’s report was answered with',
  );
  const stream = fake.streams[count - 1];
  expect(stream!.from).toContain(from);
  expect(stream!.parameters).toEqual({ callId });
  const caller = await MediaStreamClient.open(stream!.url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`the reconnected media stream was refused: ${caller.refused}`);
  caller.start(callId, fake.sid);
  return caller;
}

const RETURNED: [string, string, string][] = [
  ['busy', 'the line was busy', 'I’m sorry, Billing desk is busy right now.'],
  ['no-answer', 'nobody answered', 'I’m sorry, Billing desk didn’t answer.'],
  ['failed', 'the call could not be placed', 'I’m sorry, I couldn’t reach Billing desk.'],
  ['canceled', 'the call was cancelled before anyone answered', 'I’m sorry, the call to Billing desk didn’t go through.'],
].map(([status, why, line]) => [status!, why!, line!.replace(/’/g, "'")]);

describe('back to the agent when the transfer’s dial reaches no one', () => {
  it.each(RETURNED)(
    'sts, DialCallStatus %s: the report is answered with the media stream again; the agent is told why, says so and the call goes on',
    async (status, why, line) => {
      realtime.script.push(
        {
          caller: 'Can I talk to billing?',
          reply: [{ text: 'Sure, one moment.' }],
          tools: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }],
        },
        { caller: 'Then take a message, please.', reply: [{ text: 'Of course: what should I write down?' }] },
      );
      const { callId, caller, fake } = await openSts({ outcome: 'answered', dial: { status: status as never } });
      await caller.sendAudio(callerSpeech(600, 400));
      expect((await caller.closed).code).toBe(1000);

      // The double plays the update, dials, reports the dial; the answer is the call's media stream again.
      const next = realtime.nextSession();
      const back = await reopened(callId, fake);
      expect(fake.dialReports).toHaveLength(1);
      expect(fake.dialReports[0]).toMatchObject({ status: 200, params: { DialCallStatus: status, CallStatus: 'in-progress' } });
      const twiml = fake.documents.at(-1)!.twiml;
      expect(twiml).toContain(`<Connect action="${app.baseUrl}/telephony/twilio/${connectionId}/stream-ended?callId=${callId}" method="POST"><Stream url="`);
      expect(fake.hungUp).toBe(false);

      // A new session of the agent, told this call so far and why the transfer failed, says so first.
      const session = await next;
      await session.waitFor('session.update');
      const instructions = String(session.config.instructions);
      expect(instructions).toContain(
        'This call so far:\nCaller: Can I talk to billing?\nAgent: Sure, one moment.\nAgent: [the call was transferred to Billing desk]',
      );
      expect(instructions).toContain(`you transferred the caller to Billing desk, but the transfer failed: ${why} (the carrier's dial status: ${status})`);
      const opening = await session.waitFor('response.create');
      expect(opening.response.instructions).toContain(JSON.stringify(`${line} I'm back with you: how else can I help?`));
      expect((await stored(callId, 4))[3]).toEqual({ role: 'assistant', content: `${line} I'm back with you: how else can I help?` });
      await back.waitFor(() => back.heard().length > 0, 'the agent’s return line');
      await back.sendAudio(callerSpeech(600, 400));
      expect(await stored(callId, 6)).toEqual([
        { role: 'user', content: 'Can I talk to billing?' },
        { role: 'assistant', content: 'Sure, one moment.' },
        { role: 'assistant', content: '[the call was transferred to Billing desk]' },
        { role: 'assistant', content: `${line} I'm back with you: how else can I help?` },
        { role: 'user', content: 'Then take a message, please.' },
        { role: 'assistant', content: 'Of course: what should I write down?' },
      ]);
      const transfer = await transferOf(callId);
      expect(transfer).toMatchObject({
        destinationName: BILLING.name,
        dialStatus: status,
        dialDurationSeconds: 0,
        returnedAt: expect.stringMatching(/^\d{4}-/),
      });
      expect((await acme.graphql.ok(TransferCallDocument, { id: callId })).call.transfer).toEqual(transfer);
      // Integrators hear of it: one call.transfer_failed, the call with that transfer; another organization none.
      const failed = (await acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data as { payload: Record<string, any> }[];
      expect(failed.map((event) => event.payload.transfer)).toEqual([transfer]);
      expect(failed[0]!.payload).toMatchObject({ id: callId, status: 'in_progress' });
      expect((await other.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data).toEqual([]);
      // The conversation stayed open through the transfer: the call goes on with the agent.
      const [conversation] = await app.sql<{ status: string }>('select v.status from conversations v join calls c on c.conversation_id = v.id where c.id = ?', [
        callId,
      ]);
      expect(conversation!.status).toBe('active');
      back.hangUp();
      await back.closed;
    },
  );

  it('back with the caller, the agent may transfer again (to another destination): the call’s transfer is then the new one', async () => {
    realtime.script.push(
      { caller: 'Billing, please.', reply: [{ text: 'One moment.' }], tools: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }] },
      { caller: 'The front desk then.', reply: [{ text: 'Trying them.' }], tools: [{ name: 'transfer_call', arguments: { destination: FRONT.name } }] },
    );
    const { callId, caller, fake } = await openSts({ outcome: 'answered', dial: { status: 'busy' } });
    await caller.sendAudio(callerSpeech(600, 400));
    await caller.closed;
    const next = realtime.nextSession();
    const back = await reopened(callId, fake);
    await (await next).waitFor('response.create');
    await stored(callId, 4);
    await back.sendAudio(callerSpeech(600, 400));
    expect((await back.closed).code).toBe(1000);
    expect(fake.updates).toHaveLength(2);
    expect(fake.updates[1]!.Twiml).toContain('<Sip>sip:front@pbx.example.com</Sip>');
    expect(fake.transfers).toEqual([BILLING.number, FRONT.number]);
    // Busy there too (the double's script dials every number alike): back again, the record the second transfer's.
    const third = await reopened(callId, fake, 2);
    expect(await transferOf(callId)).toMatchObject({
      destinationName: FRONT.name,
      destination: FRONT.number,
      dialStatus: 'busy',
      returnedAt: expect.any(String),
    });
    const [events] = await app.sql<{ n: string | number }>(`select count(*) as n from events where type = 'call.transferred' and payload->>'id' = ?`, [callId]);
    expect(Number(events!.n)).toBe(2);
    third.hangUp();
    await third.closed;
  });

  it('the caller hung up during the dial (CallStatus completed): nothing reconnects, the report is recorded and answered with a hang-up', async () => {
    const callId = await liveCall({ org: acme, agentId: stsAgentId, contactId: null, connectionId });
    const [row] = await app.sql<{ carrier_call_id: string }>('select carrier_call_id from calls where id = ?', [callId]);
    const claimed = { destinationName: BILLING.name, destination: BILLING.number, mode: 'cold', transferredAt: new Date().toISOString(), dialStatus: null };
    await app.sql('update calls set transfer = ?::jsonb, stream_opened_at = now() where id = ?', [JSON.stringify(claimed), callId]);
    const answer = await postDial(callId, { CallSid: row!.carrier_call_id, CallStatus: 'completed', DialCallStatus: 'no-answer', DialCallDuration: '0' });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('<Hangup/>');
    expect(await transferOf(callId)).toMatchObject({ dialStatus: 'no-answer', returnedAt: null });
    const [after] = await app.sql<{ stream_opened_at: Date | null }>('select stream_opened_at from calls where id = ?', [callId]);
    expect(after!.stream_opened_at).not.toBeNull();
  });
});

describe('a warm transfer (Twilio: the caller held in a conference room, the person briefed on their own leg, then joined)', () => {
  const room = (callId: string) => `transfer-${callId}`;
  afterEach(() => {
    twilioFake.script(() => ({ outcome: 'answered' }));
    realtime.textAnswer = () => ({ text: JSON.stringify({ summary: 'A caller spoke with the agent.' }) });
  });

  async function warmCall(leg: CallScript) {
    twilioFake.script((to) => (to === SALES.number ? leg : { outcome: 'answered' }));
    realtime.textAnswer = ({ input }) => ({
      text: JSON.stringify({ summary: input.includes('I would like to order') ? 'The caller wants to order and asked for sales.' : 'Someone called.' }),
    });
    realtime.script.push({
      caller: 'I would like to order, can I talk to sales?',
      reply: [{ text: 'Let me get someone from sales.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: SALES.name } }],
    });
    const opened = await openSts({ outcome: 'answered' });
    await app.sql('update calls set from_number = ? where id = ?', ['+14155550000', opened.callId]);
    await opened.caller.sendAudio(callerSpeech(600, 400));
    expect((await opened.caller.closed).code).toBe(1000);
    const person = await eventually(
      async () => twilioFake.calls().find((each) => each.to === SALES.number && each.statusCallback?.includes(`callId=${opened.callId}`)),
      (found) => found !== undefined,
      'the leg to the person',
    );
    return { ...opened, person: person! };
  }

  it('answered: the caller holds in the room, the person hears the briefing then joins (bridged); the record says warm, the leg’s end its outcome', async () => {
    let hangUpPerson = () => undefined as void;
    const { callId, fake, person } = await warmCall({
      outcome: 'answered',
      durationSeconds: 64,
      holdUntil: new Promise<void>((resolve) => (hangUpPerson = resolve)),
    });
    // The caller: a line, then the room (waiting for the person, who starts it); its <Dial> reports to /dial.
    expect(fake.updates).toHaveLength(1);
    expect(fake.updates[0]!.Twiml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="Polly.Joanna">Please hold while I connect you to Sales desk.</Say>' +
        `<Dial action="${app.baseUrl}/telephony/twilio/${connectionId}/dial?callId=${callId}" method="POST">` +
        `<Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">${room(callId)}</Conference></Dial></Response>`,
    );
    // The person's leg: CreateCall (checked against Twilio's published form) from the call's number, ringing 30 s, its end reported.
    const create = twilioFake.requests().find((request) => request.method === 'POST' && request.form.To === SALES.number)!;
    expect(create.form).toMatchObject({
      From: '+14155550000',
      Timeout: '30',
      StatusCallback: `${app.baseUrl}/telephony/twilio/${connectionId}/transfer-leg?callId=${callId}`,
      StatusCallbackEvent: 'completed',
    });
    await eventually(
      async () => twilioFake.room(room(callId)),
      (state) => state?.started === true && state.participants.length === 2,
      'the caller and the person in the room',
    );
    expect(twilioFake.room(room(callId))!.participants.sort()).toEqual([fake.sid, person.sid].sort());
    // A speech-to-speech agent's summary is its call's own OpenAI session's, asked out of band (conversation none, text only):
    // the summary's instructions and the transcript as data, as a text model is sent; the caller heard none of it.
    const asked = realtime.sessions.at(-1)!.outOfBand;
    expect(asked).toHaveLength(1);
    expect(asked[0]!.instructions).toContain('is handing the caller to a person, who hears your summary');
    expect(asked[0]!.input).toContain('I would like to order, can I talk to sales?');
    expect(asked[0]!.input).not.toContain('You answer and hand callers on.');
    const briefing =
      'This is Receptionist, with a caller for Sales desk. A caller about a new order for Person 1. Summary: The caller wants to order and asked for sales. Connecting you now.';
    expect(person.heard).toEqual([briefing]);
    expect(fake.heard).toEqual(['Please hold while I connect you to Sales desk.']);
    expect(await transferOf(callId)).toMatchObject({
      destinationName: SALES.name,
      mode: 'warm',
      dialStatus: null,
      briefing,
      summary: 'The caller wants to order and asked for sales.',
      summaryError: null,
    });
    expect(await transferOf(callId)).not.toHaveProperty('legCallId');
    expect(await stored(callId, 3)).toEqual([
      { role: 'user', content: 'I would like to order, can I talk to sales?' },
      { role: 'assistant', content: 'Let me get someone from sales.' },
      { role: 'assistant', content: `[the call was transferred to Sales desk; they were briefed: ${briefing}]` },
    ]);
    hangUpPerson();
    const transfer = await eventually(
      () => transferOf(callId),
      (value) => value?.dialStatus === 'completed',
      'the leg’s end on the call',
    );
    expect(transfer).toMatchObject({ dialStatus: 'completed', dialDurationSeconds: 64, returnedAt: null });
    expect(fake.streams).toEqual([]);
    // A leg that reached the person is no failed transfer.
    expect((await acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data).toEqual([]);
  });

  it('the session fails its out-of-band answer: the person hears the template briefing with the caller’s words, and the call’s transfer says why', async () => {
    let hangUpPerson = () => undefined as void;
    const answered = warmCall({ outcome: 'answered', durationSeconds: 5, holdUntil: new Promise<void>((resolve) => (hangUpPerson = resolve)) });
    realtime.textAnswer = () => ({ text: '', fail: true });
    const { callId, person } = await answered;
    await eventually(
      async () => twilioFake.room(room(callId)),
      (state) => state?.started === true && state.participants.length === 2,
      'the caller and the person in the room',
    );
    const briefing =
      'This is Receptionist, with a caller for Sales desk. A caller about a new order for Person 1. The caller said: I would like to order, can I talk to sales? Connecting you now.';
    expect(person.heard).toEqual([briefing]);
    expect(await transferOf(callId)).toMatchObject({ briefing, summary: null, summaryError: 'the model failed: the provider ended the answer failed' });
    hangUpPerson();
    await eventually(
      () => transferOf(callId),
      (value) => value?.dialStatus === 'completed',
      'the leg’s end on the call',
    );
  });

  it('the person does not answer: the caller is moved out of the room back to the agent, which is told why and says so', async () => {
    const { callId, fake } = await warmCall({ outcome: 'no-answer' });
    const next = realtime.nextSession();
    // Not a <Dial action> answer this time: the gateway updates the caller's call (UpdateCall), which leaves the room.
    const back = await reopened(callId, fake, 1, 'UpdateCall');
    expect(fake.updates).toHaveLength(2);
    expect(fake.updates[1]!.Twiml).toContain('<Connect action=');
    expect(twilioFake.room(room(callId))?.participants ?? []).toEqual([]);
    const session = await next;
    await session.waitFor('session.update');
    expect(String(session.config.instructions)).toContain('you transferred the caller to Sales desk, but the transfer failed: nobody answered');
    expect((await stored(callId, 4))[3]).toEqual({
      role: 'assistant',
      content: "I'm sorry, Sales desk didn't answer. I'm back with you: how else can I help?",
    });
    expect(await transferOf(callId)).toMatchObject({ mode: 'warm', dialStatus: 'no-answer', returnedAt: expect.any(String) });
    const failed = await acme.graphql.ok(EventsDocument, { type: ['call.transfer_failed'], callId, limit: 10 });
    expect(failed.events.data.map((event) => (event.payload as { transfer: Record<string, unknown> }).transfer)).toEqual([await transferOf(callId)]);
    back.hangUp();
    await back.closed;
  });

  it('the caller hangs up during the hold: the person’s leg, still ringing, is ended (UpdateCall Status=canceled), nothing is left ringing', async () => {
    let ringOut = () => undefined as void;
    const { callId, fake, person } = await warmCall({ outcome: 'answered', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) });
    try {
      await eventually(
        async () => person.status,
        (status) => status === 'ringing',
        'the leg ringing',
      );
      const url = `${app.baseUrl}/telephony/twilio/${connectionId}/status?callId=${callId}`;
      const params = { AccountSid: twilioFake.accountSid, CallSid: fake.sid, CallStatus: 'completed', CallDuration: '31' };
      const ended = await postAsTwilio(url, params, twilioFake.authToken);
      expect(ended.status).toBe(200);
      await eventually(
        async () => person.status,
        (status) => status === 'canceled',
        'the leg ended',
      );
      expect(person.updates).toEqual([{ Status: 'canceled' }]);
      expect(twilioFake.room(room(callId))?.started ?? false).toBe(false);
      expect((await callRow(callId)).status).toBe('completed');
    } finally {
      ringOut();
    }
  });

  it('the carrier refusing the caller’s update after the leg was placed: the ringing leg is ended, the model is told, the call goes on', async () => {
    let ringOut = () => undefined as void;
    twilioFake.script((to) =>
      to === SALES.number ? { outcome: 'answered', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) } : { outcome: 'answered' },
    );
    realtime.script.push({
      caller: 'Sales, please.',
      reply: [{ text: 'One moment.' }],
      tools: [{ name: 'transfer_call', arguments: { destination: SALES.name } }],
      afterTools: (outputs) => [{ text: outputs[0]!.transferred === false ? 'Sorry, I could not reach sales.' : 'Done.' }],
    });
    const { callId, caller, fake, session } = await openSts({ outcome: 'answered' });
    try {
      await app.sql('update calls set from_number = ? where id = ?', ['+14155550000', callId]);
      // The caller's own UpdateCall is refused; a ringing call's Status=canceled still takes (Twilio cancels what rings).
      twilioFake.faults({ updateStatus: 500 });
      await caller.sendAudio(callerSpeech(600, 400));
      const output = await session.waitFor('conversation.item.create', (event) => event.item.type === 'function_call_output');
      expect(JSON.parse(output.item.output)).toEqual({ transferred: false, error: expect.stringContaining('the carrier refused the transfer') });
      const person = twilioFake.calls().find((each) => each.to === SALES.number && each.statusCallback?.includes(`callId=${callId}`));
      expect(person).toBeDefined();
      // Ended when the refusal came back, before the model was told: nothing is left ringing for no one.
      expect(person!.updates).toEqual([{ Status: 'canceled' }]);
      await eventually(
        async () => person!.status,
        (status) => status === 'canceled',
        'the leg canceled',
      );
      expect(fake.updates).toEqual([]);
      expect(await stored(callId, 3)).toEqual([
        { role: 'user', content: 'Sales, please.' },
        { role: 'assistant', content: 'One moment.' },
        { role: 'assistant', content: 'Sorry, I could not reach sales.' },
      ]);
      // The leg's own report (canceled) then matches no transfer: the call has none, the caller is still with the agent.
      expect(await transferOf(callId)).toBeNull();
      caller.hangUp();
      await caller.closed;
    } finally {
      twilioFake.faults({});
      ringOut();
    }
  });

  it('a leg report unsigned → 403; for a leg the transfer did not place → answered and ignored', async () => {
    const callId = await liveCall({ org: acme, agentId: stsAgentId, contactId: null, connectionId });
    const claimed = {
      destinationName: SALES.name,
      destination: SALES.number,
      mode: 'warm',
      transferredAt: new Date().toISOString(),
      dialStatus: null,
      legCallId: `CA${'1'.repeat(32)}`,
    };
    await app.sql('update calls set transfer = ?::jsonb where id = ?', [JSON.stringify(claimed), callId]);
    const url = `${app.baseUrl}/telephony/twilio/${connectionId}/transfer-leg?callId=${callId}`;
    const post = (params: Record<string, string>, token: string | null) => postAsTwilio(url, params, token);
    const other = { AccountSid: twilioFake.accountSid, CallSid: `CA${'2'.repeat(32)}`, CallStatus: 'busy', CallDuration: '0' };
    expect((await post(other, null)).status).toBe(403);
    expect((await post(other, twilioFake.authToken)).status).toBe(204);
    expect((await transferOf(callId))!.dialStatus).toBeNull();
    expect((await post({ ...other, CallSid: claimed.legCallId }, twilioFake.authToken)).status).toBe(204);
    expect(await transferOf(callId)).toMatchObject({ dialStatus: 'busy', returnedAt: expect.any(String) });
  });
});

describe('transfer_call on a streaming call (Deepgram, builtin/echo, ElevenLabs)', () => {
  it('cold to a sip: URI: the model’s tool call updates the call to <Dial><Sip>, the stream ends, and the transcript and CSV say so', async () => {
    deepgram.script([`call transfer_call {"destination": "${FRONT.name}"}`]);
    const { callId, caller, fake } = await openStream(streamingAgentId, { outcome: 'answered', dial: { status: 'no-answer' } });
    await eventually(
      () => stored(callId, 1),
      (messages) => messages.length === 1,
      'the greeting',
    );
    await caller.sendAudio(callerSpeech(600, 700), 2);
    expect((await caller.closed).code).toBe(1000);
    await eventually(
      async () => fake.dialReports.length,
      (count) => count === 1,
      'the <Dial action> report',
    );
    expect(fake.updates[0]!.Twiml).toContain(
      `<Say voice="Polly.Joanna">Connecting you to Front desk.</Say><Dial action="${app.baseUrl}/telephony/twilio/${connectionId}/dial?callId=${callId}" method="POST"><Sip>sip:front@pbx.example.com</Sip></Dial>`,
    );
    const transfer = await eventually(
      () => transferOf(callId),
      (value) => value?.dialStatus === 'no-answer',
      'the dial’s outcome',
    );
    expect(transfer).toMatchObject({ destinationName: FRONT.name, destination: FRONT.number, mode: 'cold', dialDurationSeconds: 0 });
    const messages = await stored(callId, 3);
    expect(messages[1]).toEqual({ role: 'user', content: `call transfer_call {"destination": "${FRONT.name}"}` });
    expect(messages[2]).toEqual({ role: 'assistant', content: '[the call was transferred to Front desk]' });
    // No one answered: the report is answered with the media stream again, and the agent says so first.
    expect(transfer!.returnedAt).toEqual(expect.stringMatching(/^\d{4}-/));
    const back = await reopened(callId, fake);
    expect((await stored(callId, 4))[3]).toEqual({
      role: 'assistant',
      content: "I'm sorry, Front desk didn't answer. I'm back with you: how else can I help?",
    });
    await back.waitFor(() => back.heard().length > 0, 'the agent’s return line');
    back.hangUp();
    await back.closed;

    // The calls CSV: the transfer's columns come last.
    const campaign = await campaignWithExecution(app, acme, 1);
    const listed = campaign.contactIds[0]!;
    await app.sql('update calls set execution_id = ?, program_id = ?, contact_id = ?, execution_contact_id = ? where id = ?', [
      campaign.executionId,
      campaign.programId,
      listed,
      campaign.queueRows.get(listed),
      callId,
    ]);
    const csv = await fetch(`${app.baseUrl}/api/executions/${campaign.executionId}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
    expect(csv.status).toBe(200);
    const [header, row] = (await csv.text())
      .trimEnd()
      .split('\r\n')
      .map((line) => line.split(','));
    expect(header!.slice(-4)).toEqual(['transferredTo', 'transferDestination', 'transferredAt', 'transferDialStatus']);
    expect(row!.slice(-4)).toEqual([FRONT.name, FRONT.number, transfer!.transferredAt, 'no-answer']);
  });
});

describe('a warm transfer’s briefing summarised by the agent’s text model (streaming, builtin/echo)', () => {
  const models = () => app.gateway.services.models;
  let generateObject: typeof app.gateway.services.models.generateObject;
  beforeEach(() => {
    generateObject = models().generateObject;
  });
  afterEach(() => {
    models().generateObject = generateObject;
    twilioFake.script(() => ({ outcome: 'answered' }));
  });

  const ORDERING = 'I would like to order forty chairs for my cafe.';

  /** A streaming call of the summarising agent: the caller asks for an order, then its model transfers to `destination`; the person answers. */
  async function summarisedCall(destination: { name: string; number: string }) {
    twilioFake.script((to) => (to === destination.number ? { outcome: 'answered', durationSeconds: 12 } : { outcome: 'answered' }));
    deepgram.script([ORDERING, `call transfer_call {"destination": "${destination.name}"}`]);
    const { callId, caller, fake } = await openStream(summarizingAgentId, { outcome: 'answered' });
    await app.sql('update calls set from_number = ? where id = ?', ['+14155550000', callId]);
    await eventually(
      () => stored(callId, 1),
      (messages) => messages.length === 1,
      'the greeting',
    );
    await caller.sendAudio(callerSpeech(600, 700), 2);
    await stored(callId, 3);
    await caller.sendAudio(callerSpeech(600, 700), 2);
    expect((await caller.closed).code).toBe(1000);
    const person = await eventually(
      async () => twilioFake.calls().find((each) => each.to === destination.number && each.statusCallback?.includes(`callId=${callId}`)),
      (found) => found !== undefined && found.heard.length > 0,
      'the person’s leg, answered and briefed',
    );
    return { callId, fake, person: person! };
  }

  it('the person hears the model’s summary of what the caller said after the briefing; it is on the call’s transfer (both doors) and in the transcript; the model never sees the policy', async () => {
    const asked: Parameters<typeof generateObject>[0][] = [];
    models().generateObject = (request) => (asked.push(request), generateObject.call(models(), request));
    const { callId, person } = await summarisedCall(SALES);
    // builtin/echo's summary is deterministic: the caller's first line (docs/voice.md).
    const briefing = `This is Receptionist, with a caller for Sales desk. A caller about a new order for Person 1. Summary: ${ORDERING} Connecting you now.`;
    expect(person.heard).toEqual([briefing]);
    const create = twilioFake
      .requests()
      .find((request) => request.method === 'POST' && request.form.To === SALES.number && request.form.StatusCallback?.includes(callId));
    expect(create!.form.Twiml).toContain(`<Say voice="Polly.Joanna">${briefing}</Say>`);
    // One request, of the agent's model: the transcript so far as data, nothing of its instructions or hidden policy.
    expect(asked).toHaveLength(1);
    expect(asked[0]!.model).toBe('builtin/echo');
    const prompt = JSON.stringify(asked[0]);
    expect(prompt).toContain(ORDERING);
    expect(prompt).not.toContain('discount');
    expect(prompt).not.toContain('hand callers on');
    // Once the person hung up (the leg's end reported), the record is whole.
    const transfer = await eventually(
      () => transferOf(callId),
      (value) => value?.dialStatus === 'completed',
      'the leg’s end on the call',
    );
    expect(transfer).toMatchObject({ destinationName: SALES.name, mode: 'warm', briefing, summary: ORDERING, summaryError: null });
    expect((await acme.graphql.ok(TransferCallDocument, { id: callId })).call.transfer).toEqual(transfer);
    const messages = await stored(callId, 5);
    expect(messages[4]).toEqual({ role: 'assistant', content: `[the call was transferred to Sales desk; they were briefed: ${briefing}]` });
    // Another organization sees neither the call nor its briefing.
    expect((await other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
    expect((await other.graphql.run(TransferCallDocument, { id: callId })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(deadlines.pending).toBe(0);
  });

  it('a briefing with {{summary}} has the summary in its place', async () => {
    const { callId, person } = await summarisedCall(ORDERS);
    const briefing = `This is Receptionist, with a caller for Order desk. New order. ${ORDERING} Please take it. Connecting you now.`;
    expect(person.heard).toEqual([briefing]);
    expect(await transferOf(callId)).toMatchObject({ briefing, summary: ORDERING });
  });

  it('a summary that says the agent’s policy is withheld whole: the person hears the template briefing, never the policy', async () => {
    models().generateObject = async (request) => ({
      object: { summary: `The caller wants chairs. ${POLICY}` },
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, model: request.model },
    });
    const { callId, person, fake } = await summarisedCall(SALES);
    const heard = [...person.heard, ...fake.heard].join(' ');
    expect(heard).not.toMatch(/discount|ten percent/i);
    expect(person.heard).toEqual([
      `This is Receptionist, with a caller for Sales desk. A caller about a new order for Person 1. The caller said: ${ORDERING} call transfer_call {"destination": "Sales desk"} Connecting you now.`,
    ]);
    const transfer = await transferOf(callId);
    expect(transfer).toMatchObject({ summary: null, summaryError: 'the summary said the agent’s policy: it was withheld' });
    expect(JSON.stringify(transfer)).not.toMatch(/discount/i);
    expect(JSON.stringify(await stored(callId, 5))).not.toMatch(/discount/i);
  });

  it('a model that fails: the person hears the template briefing alone, and the call’s transfer says why', async () => {
    models().generateObject = async () => {
      throw new Error('the provider is down');
    };
    const { callId, person } = await summarisedCall(ORDERS);
    // The placeholder is left empty; the caller's last words are said instead, as without a summary.
    expect(person.heard).toEqual([
      `This is Receptionist, with a caller for Order desk. New order. Please take it. The caller said: ${ORDERING} call transfer_call {"destination": "Order desk"} Connecting you now.`,
    ]);
    expect(await transferOf(callId)).toMatchObject({ summary: null, summaryError: 'the model failed: the provider is down' });
  });

  it('a model that does not answer in time: once the wait’s deadline fires, the person is briefed from the template', async () => {
    let answer = (_value: Awaited<ReturnType<typeof generateObject>>) => undefined as void;
    models().generateObject = (request) =>
      new Promise((resolve) => {
        answer = resolve;
        void request;
      });
    const twilioCalls = () => twilioFake.calls().filter((each) => each.to === SALES.number).length;
    const before = twilioCalls();
    const running = summarisedCall(SALES);
    // The leg is placed only once the summary's wait is over: the deadline is what ends it here.
    await eventually(
      async () => deadlines.pending,
      (pending) => pending === 1,
      'the summary’s wait',
    );
    expect(twilioCalls()).toBe(before);
    expect(deadlines.fire()).toBe(1);
    const { callId, person } = await running;
    expect(person.heard[0]).toContain(`The caller said: ${ORDERING}`);
    expect(person.heard[0]).not.toContain('Summary:');
    expect(await transferOf(callId)).toMatchObject({ summary: null, summaryError: 'the model did not answer within 3000 ms' });
    // A late answer changes nothing.
    answer({ object: { summary: 'Too late.' }, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, model: 'builtin/echo' } });
    expect((await transferOf(callId))!.summary).toBeNull();
  });
});

describe('the <Dial action> report', () => {
  it('unsigned or forged → 403 and nothing changes; for another call, an ended call or a repeat → answered and ignored', async () => {
    const callId = await liveCall({ org: acme, agentId: stsAgentId, contactId: null, connectionId });
    const [row] = await app.sql<{ carrier_call_id: string }>('select carrier_call_id from calls where id = ?', [callId]);
    const callSid = row!.carrier_call_id;
    const claimed = { destinationName: BILLING.name, destination: BILLING.number, mode: 'cold', transferredAt: new Date().toISOString(), dialStatus: null };
    await app.sql('update calls set transfer = ?::jsonb where id = ?', [JSON.stringify(claimed), callId]);

    expect((await postDial(callId, { CallSid: callSid }, null)).status).toBe(403);
    expect((await postDial(callId, { CallSid: callSid }, 'not-the-auth-token')).status).toBe(403);
    // Another carrier call, named with this call's id: ignored.
    const stranger = await postDial(callId, { CallSid: `CA${'0'.repeat(32)}` });
    expect(stranger.status).toBe(200);
    expect(await stranger.text()).toContain('<Hangup/>');
    expect((await transferOf(callId))!.dialStatus).toBeNull();

    expect((await postDial(callId, { CallSid: callSid, DialCallStatus: 'busy', DialCallDuration: '0' })).status).toBe(200);
    expect(await transferOf(callId)).toMatchObject({ dialStatus: 'busy', dialDurationSeconds: 0 });
    // A repeat does not change the first report.
    expect((await postDial(callId, { CallSid: callSid, DialCallStatus: 'completed' })).status).toBe(200);
    expect((await transferOf(callId))!.dialStatus).toBe('busy');

    // A call already ended: ignored.
    const ended = await liveCall({ org: acme, agentId: stsAgentId, contactId: null, connectionId, status: 'completed' });
    const [endedRow] = await app.sql<{ carrier_call_id: string }>('select carrier_call_id from calls where id = ?', [ended]);
    await app.sql('update calls set transfer = ?::jsonb where id = ?', [JSON.stringify(claimed), ended]);
    expect((await postDial(ended, { CallSid: endedRow!.carrier_call_id })).status).toBe(200);
    expect((await transferOf(ended))!.dialStatus).toBeNull();
  });
});

describe('transferDestinations on both doors', () => {
  const agentInput = (transferDestinations: unknown) => ({
    name: 'Doors',
    instructions: 'Hand on.',
    modelConfig: { model: 'builtin/echo' },
    transferDestinations,
  });
  const cases: [string, unknown, string, string][] = [
    ['neither E.164 nor sip:', [{ name: 'Desk', number: '415-555-0100' }], 'transferDestinations.0.number', 'E.164'],
    ['a sip: URI without a host', [{ name: 'Desk', number: 'sip:desk' }], 'transferDestinations.0.number', 'sip: URI'],
    ['a mode neither cold nor warm', [{ name: 'Desk', number: '+14155550100', mode: 'lukewarm' }], 'transferDestinations.0.mode', 'mode must be cold or warm'],
    ['a briefing too long', [{ name: 'Desk', number: '+14155550100', mode: 'warm', briefing: 'x'.repeat(501) }], 'transferDestinations.0.briefing', ''],
    ['a name too long', [{ name: 'x'.repeat(65), number: '+14155550100' }], 'transferDestinations.0.name', ''],
    ['a description too long', [{ name: 'Desk', number: '+14155550100', description: 'x'.repeat(501) }], 'transferDestinations.0.description', ''],
    ['a name twice', [BILLING, { ...FRONT, name: BILLING.name }], 'transferDestinations.1.name', 'already a destination'],
    ['more than 10', Array.from({ length: 11 }, (_, index) => ({ name: `Desk ${index}`, number: '+14155550100' })), 'transferDestinations', ''],
  ];

  it.each(cases)('%s → 400 naming the field on REST, BAD_USER_INPUT with the same message on GraphQL', async (_what, destinations, field, words) => {
    const rest = await acme.rest.post('/api/agents', agentInput(destinations));
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    const restError = (rest.body.errors as { field: string; message: string }[]).find((error) => error.field === field);
    expect(restError?.message).toContain(words);
    const graphql = await acme.graphql.run(CreateTransferAgentDocument, { input: agentInput(destinations) as never });
    expect(graphql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
    expect(graphql.errors?.[0]?.extensions?.errors).toEqual(rest.body.errors);
  });

  it('are stored and shown the same on both doors; an update replaces them; another organization’s agent is 404', async () => {
    const created = await acme.graphql.ok(CreateTransferAgentDocument, { input: agentInput([BILLING, FRONT]) as never });
    expect(created.createAgent.transferDestinations).toEqual([
      { ...BILLING, briefing: null },
      { ...FRONT, mode: 'cold', briefing: null },
    ]);
    const rest = await acme.rest.get(`/api/agents/${created.createAgent.id}`);
    expect(rest.body.transferDestinations).toEqual(created.createAgent.transferDestinations);
    const updated = await acme.graphql.ok(UpdateTransferAgentDocument, { id: created.createAgent.id, input: { transferDestinations: [] } });
    expect(updated.updateAgent.transferDestinations).toEqual([]);
    const put = await acme.rest.put(`/api/agents/${created.createAgent.id}`, { transferDestinations: [FRONT] });
    expect(put.status).toBe(200);
    expect(put.body.transferDestinations).toEqual([{ ...FRONT, mode: 'cold', briefing: null }]);
    const foreign = await other.graphql.run(UpdateTransferAgentDocument, { id: created.createAgent.id, input: { transferDestinations: [] } });
    expect(foreign.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await other.rest.get(`/api/agents/${created.createAgent.id}`)).status).toBe(404);
  });
});
