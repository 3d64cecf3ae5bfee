import { TransferCallDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type CallScript, type FakeCall, type FakeTwilio } from '../support/fake-twilio.js';
import { FakeOpenAiChat } from '../support/fake-openai-chat.js';
import { runUntilCompleted, startTwilioApp } from '../telephony/fixtures.js';
import { callsOf, closedConversation, createVoiceAgent, messagesOf, voiceCampaign } from './fixtures.js';
import { BILLING, SALES, transferOf, answeredColdTransfer } from './transfer-fixtures.js';
import { eventually } from './sts-fixtures.js';
import { WORDS } from '../../src/modules/voice/voice-actions.js';
import { WARM_RING_SECONDS } from '../../src/modules/voice/transfer/call-transfers.js';

// A batch agent's call tools (issue #44), through the real doors: a one-contact Twilio campaign whose
// callee answers each <Gather> (the Twilio double follows the TwiML the gateway answers, checking every
// document against the TwiML reference, twiml-check.ts). The agent's model is builtin/echo, which calls
// a tool a caller's turn names (`call <tool> <JSON>`), so the model here is offered transfer_call and
// send_digits exactly as it would call them. A cold transfer is the turn's answer: the reply, the line
// and a <Dial action>; the dial's report is recorded on the call; one that reaches no one brings the
// caller back to the agent, which says so and listens again. A warm one holds the caller in a
// conference room while the person's own leg rings; a leg nobody answers brings the caller out of the
// room (UpdateCall, which the double plays at once on a call waiting in a room, as Twilio does), and
// there the agent's model is the OpenAI-compatible chat double, so the test reads what it is sent on
// its next turn. send_digits is <Play digits> after the reply. PGlite, and PostgreSQL with TEST_DATABASE_URL.

const BLOCKED = { name: 'Old line', number: '+14155550177', description: 'The old support line' };

let fake: FakeTwilio;
let chat: FakeOpenAiChat;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let agentId: string;

beforeAll(async () => {
  fake = await startFakeTwilio();
  chat = await new FakeOpenAiChat().start();
  app = await startTwilioApp(fake, undefined, { providers: { openaiCompatibleBaseUrl: chat.url, openaiCompatibleApiKey: 'sk-compatible-batch' } });
  acme = await app.organization('Acme batch tools');
  other = await app.organization('Other batch tools');
  agentId = await createVoiceAgent(acme, { firstMessage: 'Hello, this is Acme.', transferDestinations: [BILLING, BLOCKED, SALES] });
  expect((await acme.rest.post('/api/do-not-call', { phone: BLOCKED.number, note: 'asked not to be called' })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await fake?.close();
  await chat?.close();
});

afterEach(() => {
  expect(fake.twimlProblems()).toEqual([]);
  expect(chat.problems).toEqual([]);
});

/** The name of the contact called at `phone` (the briefing's {{contact.name}}). */
const contactName = async (phone: string) =>
  (await app.sql<{ name: string }>('select name from contacts where phone = ? order by created_at desc limit 1', [phone]))[0]!.name;

const toolTurn = (name: string, args: Record<string, unknown>) => `call ${name} ${JSON.stringify(args)}`;

/** A one-contact campaign of the batch agent whose callee says `turns`: the call as the double heard it, its row, and its transcript. */
async function runCall(turns: CallScript['turns'], dial?: CallScript['dial'], agent = agentId) {
  const campaign = await voiceCampaign(acme, fake, { agentId: agent });
  fake.script(() => ({ outcome: 'answered', durationSeconds: 30, stepMs: 5, turns, ...(dial ? { dial } : {}) }));
  await runUntilCompleted(app, acme, campaign.executionId, fake);
  const heard = fake.calls().find((call) => call.to === campaign.phones[0]) as FakeCall;
  const [record] = await callsOf(app, campaign.executionId);
  await closedConversation(acme, record!.conversation_id!, 60_000);
  const messages = (await messagesOf(app, record!.conversation_id!)).map((message) => [message.role, message.content]);
  return { heard, record: record!, messages };
}

describe('transfer_call on a batch call', () => {
  it('cold: the turn is answered with the reply, the line and a <Dial action>; the dial’s report is recorded; record, transcript and event say so', async () => {
    const { heard, record, messages } = await runCall([toolTurn('transfer_call', { destination: BILLING.name })], { status: 'completed', durationSeconds: 95 });
    expect(heard.transfers).toEqual([BILLING.number]);
    expect(heard.heard).toEqual([
      'Hello, this is Acme.',
      WORDS.filler,
      `Echo: transfer_call answered ${JSON.stringify({ transferred: true, destination: BILLING.name })}`,
      `Connecting you to ${BILLING.name}.`,
    ]);
    // The answer that transferred: the line, then the dial reporting to the connection's /dial route.
    const answer = heard.documents.find((document) => document.twiml.includes('<Dial'))!;
    expect(answer.url).toMatch(/\/reply\?callId=/);
    expect(answer.twiml).toMatch(/<Dial action="[^"]+\/dial\?callId=[0-9a-f-]{36}" method="POST"><Number>\+14155550100<\/Number><\/Dial>/);
    expect(heard.dialReports).toHaveLength(1);
    expect(heard.dialReports[0]!.status).toBe(200);
    expect(await transferOf(acme, record.id)).toEqual(answeredColdTransfer(BILLING, 95));
    expect(messages.slice(-2)).toEqual([
      ['assistant', `Echo: transfer_call answered ${JSON.stringify({ transferred: true, destination: BILLING.name })}`],
      ['assistant', `[the call was transferred to ${BILLING.name}]`],
    ]);
    const events = (await acme.rest.get(`/api/events?type=call.transferred&callId=${record.id}`)).body.data as { payload: Record<string, any> }[];
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ id: record.id, transfer: { destinationName: BILLING.name, mode: 'cold' } });
    // Another organization sees neither the call nor its event.
    expect((await other.rest.get(`/api/calls/${record.id}`)).status).toBe(404);
    expect((await other.graphql.run(TransferCallDocument, { id: record.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await other.rest.get(`/api/events?type=call.transferred&callId=${record.id}`)).body.data).toEqual([]);
  });

  it('a dial that nobody answers brings the caller back: the agent says so and listens again; the model reads why', async () => {
    const { heard, record, messages } = await runCall([toolTurn('transfer_call', { destination: BILLING.name }), 'All right, thanks'], { status: 'no-answer' });
    expect(heard.transfers).toEqual([BILLING.number]);
    const back = `I'm sorry, ${BILLING.name} didn't answer. I'm back with you: how else can I help?`;
    // Back with the agent: the call goes on as any batch call (here the callee then says nothing, and the call ends politely).
    expect(heard.heard.slice(3)).toEqual([
      `Connecting you to ${BILLING.name}.`,
      back,
      WORDS.filler,
      'Echo: All right, thanks',
      WORDS.reprompt,
      WORDS.noInputGoodbye,
    ]);
    // The dial's action was answered with the agent's line and a <Gather>, not a stream.
    expect(heard.dialReports[0]!.status).toBe(200);
    const answer = heard.documents.find((document) => document.url.includes('/dial?'))!;
    expect(answer.twiml).toContain('<Gather');
    expect(answer.twiml).not.toContain('<Stream');
    expect(await transferOf(acme, record.id)).toMatchObject({ destinationName: BILLING.name, dialStatus: 'no-answer', returnedAt: expect.any(String) });
    expect(messages.slice(-4)).toEqual([
      ['assistant', `[the transfer to ${BILLING.name} failed: nobody answered (dial status no-answer); the caller is back with the agent]`],
      ['assistant', back],
      ['user', 'All right, thanks'],
      ['assistant', 'Echo: All right, thanks'],
    ]);
    const failed = (await acme.rest.get(`/api/events?type=call.transfer_failed&callId=${record.id}`)).body.data as unknown[];
    expect(failed).toHaveLength(1);
  });

  it('a destination on the do-not-call list is refused: the model is told, nothing is dialled, the call goes on', async () => {
    const { heard, record } = await runCall([toolTurn('transfer_call', { destination: BLOCKED.name })]);
    expect(heard.transfers).toEqual([]);
    expect(heard.heard[2]).toMatch(/^Echo: transfer_call failed: Old line is on the organization’s do-not-call list/);
    expect(await transferOf(acme, record.id)).toBeNull();
    expect((await acme.rest.get(`/api/events?type=call.transferred&callId=${record.id}`)).body.data).toEqual([]);
  });

  it('is offered only with destinations: without, the model has no such tool (its turn is words)', async () => {
    const plain = await createVoiceAgent(acme, { firstMessage: 'Hello, this is Acme.' });
    const turn = toolTurn('transfer_call', { destination: BILLING.name });
    const { heard } = await runCall([turn], undefined, plain);
    expect(heard.transfers).toEqual([]);
    expect(heard.heard[2]).toBe(`Echo: ${turn}`);
  });
});

describe('a warm transfer on a batch call', () => {
  afterEach(() => fake.script(() => ({ outcome: 'answered' })));

  it('the turn is answered with the hold line and the room; the person’s leg is briefed (the agent’s text model’s summary) and joins', async () => {
    const campaign = await voiceCampaign(acme, fake, { agentId });
    let releaseCaller = () => undefined as void;
    let releasePerson = () => undefined as void;
    const callerHeld = new Promise<void>((resolve) => (releaseCaller = resolve));
    const personHeld = new Promise<void>((resolve) => (releasePerson = resolve));
    const turn = toolTurn('transfer_call', { destination: SALES.name });
    fake.script((to) =>
      to === SALES.number
        ? { outcome: 'answered', durationSeconds: 64, stepMs: 5, holdUntil: personHeld }
        : { outcome: 'answered', durationSeconds: 90, stepMs: 5, turns: [turn], holdUntil: callerHeld },
    );
    const done = runUntilCompleted(app, acme, campaign.executionId, fake);
    // Whatever fails below, neither call is left held for the next test.
    try {
      await warmHeld(campaign, turn, done, releasePerson, releaseCaller);
    } finally {
      releasePerson();
      releaseCaller();
    }
  });
});

/** A warm transfer the person's leg does not take: its status, why the model is told, and the line the caller hears. */
const UNREACHED_WARM: [string, string, string][] = [
  ['no-answer', 'nobody answered', `I'm sorry, ${SALES.name} didn't answer.`],
  ['busy', 'the line was busy', `I'm sorry, ${SALES.name} is busy right now.`],
];

describe('a warm transfer on a batch call that nobody takes', () => {
  afterEach(() => {
    fake.script(() => ({ outcome: 'answered' }));
    chat.answer = () => ({ content: 'Hello.' });
  });

  it.each(UNREACHED_WARM)(
    'the person’s leg ends %s: the caller is taken out of the room back to the agent (a <Gather>), the record says so, nothing rings; the model reads why',
    async (status, why, line) => {
      const agent = await createVoiceAgent(acme, {
        firstMessage: 'Hello, this is Acme.',
        modelConfig: { model: 'openai-compatible/batch-llm' },
        // A batch model reads the call's earlier turns through its memory window (docs/voice.md, On batch calls).
        memoryConfig: { enabled: true, lastMessages: 10 },
        transferDestinations: [SALES],
      });
      const campaign = await voiceCampaign(acme, fake, { agentId: agent });
      let ringOut = () => undefined as void;
      let releaseCaller = () => undefined as void;
      const ringing = new Promise<void>((resolve) => (ringOut = resolve));
      const callerHeld = new Promise<void>((resolve) => (releaseCaller = resolve));
      // The person's leg rings until the caller is in the room, then ends as Twilio reports a leg not taken
      // (no-answer: its Timeout passed); the caller's call stays up (in the room, then back with the agent) until it hangs up.
      fake.script((to) =>
        to === SALES.number
          ? { outcome: status as 'no-answer' | 'busy', stepMs: 5, ringUntil: ringing }
          : { outcome: 'answered', durationSeconds: 90, stepMs: 5, turns: ['Can I talk to sales?', 'Then take a message, please.'], holdUntil: callerHeld },
      );
      chat.requests.length = 0;
      chat.answer = (request) => {
        const messages = request.messages as { role: string; content: unknown }[];
        if (JSON.stringify(messages).includes('Summarise the call so far')) return { content: JSON.stringify({ summary: 'The caller wants to order.' }) };
        const last = messages.at(-1)!;
        if (last.role === 'tool') return { content: 'One moment, please.' };
        if (last.content === 'Can I talk to sales?') return { toolCalls: [{ name: 'transfer_call', arguments: { destination: SALES.name } }] };
        return { content: 'Of course: what should I write down?' };
      };
      const done = runUntilCompleted(app, acme, campaign.executionId, fake);
      try {
        const [record] = await eventually(
          () => callsOf(app, campaign.executionId),
          (rows) => rows.length === 1,
          'the call row',
        );
        const callId = record!.id;
        const room = `transfer-${callId}`;
        const caller = await eventually(
          async () => fake.calls().find((call) => call.to === campaign.phones[0]),
          (found) => found !== undefined && fake.room(room)?.participants.includes(found.sid) === true,
          'the caller held in the room',
        );
        const person = fake.calls().find((call) => call.to === SALES.number && call.statusCallback?.includes(`callId=${callId}`))!;
        // The person's leg rings for the documented time (Twilio's Timeout), the caller alone in the room, which has not started.
        expect(person.status).toBe('ringing');
        const create = fake
          .requests()
          .find((request) => request.method === 'POST' && request.path.endsWith('/Calls.json') && request.form.To === SALES.number)!;
        expect(create.form.Timeout).toBe(String(WARM_RING_SECONDS));
        expect(fake.room(room)).toEqual({ participants: [caller!.sid], started: false });
        ringOut();
        await done;

        // The gateway updated the caller's call (it was waiting in the room, not fetching anything): the agent's line in a <Gather>, no stream.
        expect(caller!.updates).toHaveLength(1);
        const back = caller!.documents.find((document) => document.url === 'UpdateCall')!;
        expect(back.twiml).toContain(`<Gather `);
        expect(back.twiml).toContain(`${line} I'm back with you: how else can I help?`);
        expect(back.twiml).not.toContain('<Stream');
        expect(fake.room(room)).toEqual({ participants: [], started: false });
        expect(caller!.heard).toEqual([
          'Hello, this is Acme.',
          WORDS.filler,
          'One moment, please.',
          `Please hold while I connect you to ${SALES.name}.`,
          `${line} I'm back with you: how else can I help?`,
          WORDS.filler,
          'Of course: what should I write down?',
          WORDS.reprompt,
          WORDS.noInputGoodbye,
        ]);
        // Nothing is left ringing: the leg ended as Twilio reported it, nobody had to cancel it; the caller's call ended by its own hang-up.
        expect(person.status).toBe(status);
        expect(person.updates).toEqual([]);
        expect(caller!.hungUp).toBe(true);
        expect(caller!.status).toBe('completed');

        // The record says so (both doors), and integrators hear of it once.
        const transfer = await transferOf(acme, callId);
        expect(transfer).toMatchObject({
          destinationName: SALES.name,
          mode: 'warm',
          dialStatus: status,
          dialDurationSeconds: 0,
          returnedAt: expect.any(String),
        });
        expect((await acme.graphql.ok(TransferCallDocument, { id: callId })).call.transfer).toEqual(transfer);
        const failed = (await acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data as { payload: Record<string, any> }[];
        expect(failed.map((event) => event.payload.transfer)).toEqual([transfer]);
        expect((await other.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data).toEqual([]);
        const [ended] = await callsOf(app, campaign.executionId);
        expect(ended).toMatchObject({ status: 'completed', outcome: 'answered' });

        // The model's next turn is sent the failed transfer and why, before the caller's words.
        const next = chat.requests.find((request) => (request.messages as { content: unknown }[]).at(-1)?.content === 'Then take a message, please.')!;
        const sent = (next.messages as { role: string; content: unknown }[]).slice(-3);
        expect(sent).toEqual([
          { role: 'assistant', content: `[the transfer to ${SALES.name} failed: ${why} (dial status ${status}); the caller is back with the agent]` },
          { role: 'assistant', content: `${line} I'm back with you: how else can I help?` },
          { role: 'user', content: 'Then take a message, please.' },
        ]);
      } finally {
        ringOut();
        releaseCaller();
      }
    },
  );
});

/** The warm transfer's checks, while both calls are held, then released in turn. */
async function warmHeld(
  campaign: { executionId: string; phones: string[] },
  turn: string,
  done: Promise<void>,
  releasePerson: () => void,
  releaseCaller: () => void,
) {
  const caller = await eventually(
    async () => fake.calls().find((call) => call.to === campaign.phones[0]),
    (found) => found !== undefined,
    'the campaign’s call',
  );
  const [record] = await eventually(
    () => callsOf(app, campaign.executionId),
    (rows) => rows.length === 1,
    'the call row',
  );
  const room = `transfer-${record!.id}`;
  await eventually(
    async () => fake.room(room),
    (state) => state?.started === true && state.participants.length === 2,
    'the caller and the person in the room',
  );
  const person = fake.calls().find((call) => call.to === SALES.number && call.statusCallback?.includes(`callId=${record!.id}`))!;
  const answer = caller!.documents.find((document) => document.twiml.includes('<Conference'))!;
  expect(answer.url).toMatch(/\/reply\?callId=/);
  expect(answer.twiml).toContain(
    `<Say voice="Polly.Matthew">Please hold while I connect you to Sales desk.</Say><Dial action="${app.baseUrl}/telephony/twilio/`,
  );
  expect(answer.twiml).toContain(`<Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">${room}</Conference></Dial>`);
  // builtin/echo's summary is the caller's first line: the agent's text model wrote it, as a batch agent has one.
  expect(person.heard).toHaveLength(1);
  const briefing = person.heard[0]!;
  expect(briefing).toBe(
    `This is Ava, with a caller for Sales desk. A caller about a new order for ${await contactName(campaign.phones[0]!)}. Summary: ${turn} Connecting you now.`,
  );
  expect(await transferOf(acme, record!.id)).toMatchObject({ destinationName: SALES.name, mode: 'warm', briefing, summary: turn, summaryError: null });
  releasePerson();
  await eventually(
    () => transferOf(acme, record!.id),
    (value) => value?.dialStatus === 'completed',
    'the leg’s end on the call',
  );
  releaseCaller();
  await done;
  const [ended] = await callsOf(app, campaign.executionId);
  await closedConversation(acme, ended!.conversation_id!, 60_000);
  const messages = (await messagesOf(app, ended!.conversation_id!)).map((message) => [message.role, message.content]);
  expect(messages.at(-1)).toEqual(['assistant', `[the call was transferred to Sales desk; they were briefed: ${briefing}]`]);
}

describe('send_digits on a batch call', () => {
  it('presses the keys with <Play digits> after the reply; the transcript says which; the model is told', async () => {
    const { heard, messages } = await runCall([toolTurn('send_digits', { digits: '1w2#' }), 'Thanks']);
    expect(heard.pressed).toEqual(['1w2#']);
    const reply = `Echo: send_digits answered ${JSON.stringify({ sent: true, digits: '1w2#', when: 'after what you say now has been heard' })}`;
    expect(heard.heard.slice(1, 3)).toEqual([WORDS.filler, reply]);
    const answer = heard.documents.find((document) => document.twiml.includes('<Play'))!;
    // The reply is said, then the keys pressed, then the agent listens.
    expect(answer.twiml).toMatch(/<Say[^>]*>[^<]+<\/Say><Play digits="1w2#"\/><Gather /);
    expect(messages).toContainEqual(['assistant', '[the agent pressed 1w2#]']);
  });

  it('keys outside 0-9 * # w press nothing: the model is told why', async () => {
    const { heard, messages } = await runCall([toolTurn('send_digits', { digits: '12x' })]);
    expect(heard.pressed).toEqual([]);
    expect(heard.heard[2]).toMatch(/^Echo: send_digits failed: digits may only hold 0-9, \* and #, and w for a half-second pause; not "x"/);
    expect(messages.some(([, content]) => content!.startsWith('[the agent pressed'))).toBe(false);
  });
});

const toolNames = (request: Record<string, any>) => ((request.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

// The model a real client talks to: the agent's text model is `openai-compatible/…`, served by the
// Chat Completions double (each request checked against OpenAI's CreateChatCompletionRequest). A model
// server that takes no tools (Ollama answers such a request 400 "… does not support tools") is asked
// the turn again without the call tools, so the call goes on as before batch calls had tools.
describe('a batch agent on an OpenAI-compatible model', () => {
  beforeEach(() => {
    chat.requests.length = 0;
  });

  it('is offered transfer_call and send_digits; the model’s transfer_call is the turn’s <Dial>', async () => {
    const agentId = await createVoiceAgent(acme, {
      firstMessage: 'Hello, this is Acme.',
      modelConfig: { model: 'openai-compatible/shop-llm' },
      transferDestinations: [BILLING],
    });
    chat.answer = (_request, n) =>
      n === 0 ? { toolCalls: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }] } : { content: 'One moment, please.' };
    const { heard, record } = await runCall(['I need to talk about my bill'], undefined, agentId);
    expect(toolNames(chat.requests[0]!)).toEqual(['send_digits', 'transfer_call']);
    expect(heard.transfers).toEqual([BILLING.number]);
    expect(heard.heard).toContain(`Connecting you to ${BILLING.name}.`);
    expect(record.outcome).not.toBe('failed');
  });

  it('on a model server that takes no tools (400), the turn is asked again without them and answered: the call goes on', async () => {
    const agentId = await createVoiceAgent(acme, {
      firstMessage: 'Hello, this is Acme.',
      modelConfig: { model: 'openai-compatible/gemma3:4b' },
      transferDestinations: [BILLING],
    });
    chat.answer = (request) =>
      request.tools
        ? { refuse: { status: 400, message: 'registry.ollama.ai/library/gemma3:4b does not support tools' } }
        : { content: 'Happy to help with that.' };
    const { heard, record, messages } = await runCall(['Can you move my appointment?', 'Thanks'], undefined, agentId);
    // Each turn: the request with the tools, refused; the same turn without them, answered.
    expect(chat.requests.map((request) => toolNames(request))).toEqual([['send_digits', 'transfer_call'], [], ['send_digits', 'transfer_call'], []]);
    expect(chat.requests[1]!.messages).toEqual(chat.requests[0]!.messages);
    expect(heard.heard).toEqual([
      'Hello, this is Acme.',
      WORDS.filler,
      'Happy to help with that.',
      WORDS.filler,
      'Happy to help with that.',
      WORDS.reprompt,
      WORDS.noInputGoodbye,
    ]);
    expect(record.status).toBe('completed');
    expect(record.error_text).toBeNull();
    // One user message per turn: the turn asked twice is stored once.
    expect(messages.filter(([role]) => role === 'user')).toEqual([
      ['user', 'Can you move my appointment?'],
      ['user', 'Thanks'],
    ]);
  });

  it('a refusal that is not a 400 is not asked again: the call fails with the apology, as before', async () => {
    const agentId = await createVoiceAgent(acme, { firstMessage: 'Hello, this is Acme.', modelConfig: { model: 'openai-compatible/shop-llm' } });
    chat.answer = () => ({ refuse: { status: 500, message: 'the server is down' } });
    const { heard, record } = await runCall(['Hello?'], undefined, agentId);
    expect(chat.requests).toHaveLength(1);
    expect(heard.heard).toContain(WORDS.apology);
    expect(record.status).toBe('failed');
    expect(record.error_text).toContain('answered HTTP 500');
  });
});
