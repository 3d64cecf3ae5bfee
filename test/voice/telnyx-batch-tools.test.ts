import { eventually } from '../helpers/eventually.js';
import type { FakeTelnyxCall, TelnyxCallScript } from '../support/fake-telnyx.js';
import { WORDS } from '../../src/modules/voice/voice-actions.js';
import {
  providerProblems,
  randomNumber,
  resetProviders,
  startTelnyxVoice,
  stopTelnyxVoice,
  telnyxVoiceHelpers,
  type TelnyxVoiceWorld,
} from './telnyx-fixtures.js';
import { answeredColdTransfer, BILLING, SALES, transferOf as transferOfCall } from './transfer-fixtures.js';
import { WARM_RING_SECONDS } from '../../src/modules/voice/transfer/call-transfers.js';

// A batch agent's call tools on a Telnyx call (TeXML), through the real doors, as batch-tools.test.ts
// does on Twilio: a call placed on REST through the loopback Telnyx (every request checked against
// Telnyx's vendored OpenAPI, the TeXML <Dial>, <Conference> and <Play> attributes against the TeXML
// pages), which follows each document the gateway answers and answers each <Gather> with the script's
// turns, and waits in a <Conference> room until an update moves it. The agent's model is builtin/echo,
// which calls the tool a turn names.

let world: TelnyxVoiceWorld;
let agentId: string;
let refusedBefore = 0;

beforeAll(async () => {
  world = await startTelnyxVoice('Telnyx batch tools', { deepgram: 'dg-test-key-telnyx-batch', elevenlabs: 'xi-test-key-telnyx-batch' });
  const agent = await world.acme.rest.post('/api/agents', {
    name: 'Ava',
    instructions: 'You answer and hand callers on.',
    firstMessage: 'Hello, this is Acme on Telnyx.',
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'batch' },
    transferDestinations: [BILLING, SALES],
  });
  expect(agent.status).toBe(201);
  expect((await world.acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  agentId = agent.body.id;
}, 60_000);

afterAll(() => stopTelnyxVoice(world));

beforeEach(() => {
  resetProviders(world);
  refusedBefore = world.telnyx.refusals().length;
});

afterEach(() => {
  expect(providerProblems(world)).toEqual([]);
  expect(world.telnyx.refusals().slice(refusedBefore)).toEqual([]);
});

const { callOnceItIs, transcript } = telnyxVoiceHelpers(() => world);
const toolTurn = (name: string, args: Record<string, unknown>) => `call ${name} ${JSON.stringify(args)}`;

/** A batch call placed on REST whose callee says `turns`, once it ended: our call's id and Telnyx's. */
async function batchCall(turns: TelnyxCallScript['turns'], dial?: TelnyxCallScript['dial']): Promise<{ callId: string; call: FakeTelnyxCall }> {
  const to = randomNumber();
  world.telnyx.script(() => ({ outcome: 'answered', durationSeconds: 20, turns, ...(dial ? { dial } : {}) }));
  const placed = await world.acme.rest.post('/api/calls', { to, agentId, from: world.from });
  expect(placed.status).toBe(201);
  await callOnceItIs(placed.body.id, (call) => call.status === 'completed', 'the call ended');
  const call = world.telnyx.calls().find((each) => each.to === to)!;
  return { callId: placed.body.id, call };
}

describe('batch call tools on Telnyx', () => {
  it('a cold transfer: the turn is answered with the reply, the line and <Dial action>; the signed report is recorded and answered with a hang-up', async () => {
    const { callId, call } = await batchCall([toolTurn('transfer_call', { destination: BILLING.name })], { status: 'completed', durationSeconds: 95 });
    expect(call.transfers).toEqual([BILLING.number]);
    expect(call.heard.slice(-1)).toEqual([`Connecting you to ${BILLING.name}.`]);
    const answer = call.documents.find((document) => document.texml.includes('<Dial'))!;
    expect(answer.url).toMatch(/\/reply\?callId=/);
    expect(answer.texml).toContain(
      `<Dial action="${world.app.baseUrl}/telephony/telnyx/${world.connectionId}/dial?callId=${callId}" method="POST"><Number>+14155550100</Number></Dial>`,
    );
    expect(call.dialReports[0]).toMatchObject({ status: 200 });
    expect(call.documents.at(-1)!.texml).toContain('<Hangup/>');
    expect(await transferOfCall(world.acme, callId)).toEqual(answeredColdTransfer(BILLING, 95));
    expect((await world.other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
  });

  it('a dial that nobody answers: the report is answered with the agent’s line in a <Gather>, and the call goes on', async () => {
    const { callId, call } = await batchCall([toolTurn('transfer_call', { destination: BILLING.name }), 'Fine'], { status: 'busy' });
    const back = `I'm sorry, ${BILLING.name} is busy right now. I'm back with you: how else can I help?`;
    expect(call.heard.slice(3)).toEqual([`Connecting you to ${BILLING.name}.`, back, WORDS.filler, 'Echo: Fine', WORDS.reprompt, WORDS.noInputGoodbye]);
    expect(await transferOfCall(world.acme, callId)).toMatchObject({ dialStatus: 'busy', returnedAt: expect.any(String) });
  });

  it('a warm transfer nobody answers: the caller leaves the room with the agent’s line in a <Gather> (UpdateCall), the record says so, nothing rings', async () => {
    const to = randomNumber();
    // The person's leg rings until the test says nobody answered (Telnyx's Timeout, never waited for here).
    let ringOut = () => undefined as void;
    const ringing = new Promise<void>((resolve) => (ringOut = resolve));
    world.telnyx.script((number) =>
      number === SALES.number
        ? { outcome: 'no-answer', ringUntil: ringing }
        : { outcome: 'answered', durationSeconds: 20, turns: [toolTurn('transfer_call', { destination: SALES.name }), 'Fine'] },
    );
    try {
      const placed = await world.acme.rest.post('/api/calls', { to, agentId, from: world.from });
      expect(placed.status).toBe(201);
      const callId = placed.body.id as string;
      const room = `transfer-${callId}`;
      const call = await eventually(
        async () => world.telnyx.calls().find((each) => each.to === to),
        (found) => found !== undefined && world.telnyx.room(room)?.participants.includes(found.sid) === true,
        { what: 'the caller waiting in the room', everyMs: 20 },
      );
      const leg = world.telnyx.calls().find((each) => each.to === SALES.number && each.statusCallback?.includes(`callId=${callId}`))!;
      expect(leg.status).toBe('ringing');
      expect(leg.timeoutSeconds).toBe(WARM_RING_SECONDS);
      expect(world.telnyx.room(room)).toMatchObject({ participants: [call!.sid], started: false });
      ringOut();
      await callOnceItIs(callId, (value) => value.status === 'completed', 'the call ended');
      const back = `I'm sorry, ${SALES.name} didn't answer. I'm back with you: how else can I help?`;
      expect(call!.updates).toHaveLength(1);
      const moved = call!.documents.find((document) => document.url === 'UpdateCall')!;
      expect(moved.texml).toContain('<Gather ');
      expect(moved.texml).not.toContain('<Stream');
      expect(call!.heard.slice(-6)).toEqual([
        `Please hold while I connect you to ${SALES.name}.`,
        back,
        WORDS.filler,
        'Echo: Fine',
        WORDS.reprompt,
        WORDS.noInputGoodbye,
      ]);
      expect(world.telnyx.room(room)?.participants).toEqual([]);
      expect(leg.status).toBe('no-answer');
      expect(leg.updates).toEqual([]);
      expect(await transferOfCall(world.acme, callId)).toMatchObject({ mode: 'warm', dialStatus: 'no-answer', returnedAt: expect.any(String) });
      const failed = (await world.acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data as { payload: Record<string, any> }[];
      expect(failed.map((event) => event.payload.transfer.dialStatus)).toEqual(['no-answer']);
      const messages = await transcript(callId, 8);
      expect(messages).toContainEqual([
        'assistant',
        `[the transfer to ${SALES.name} failed: nobody answered (dial status no-answer); the caller is back with the agent]`,
      ]);
      expect(messages).toContainEqual(['assistant', back]);
    } finally {
      ringOut();
    }
  });

  it('send_digits: <Play digits> after the reply, the transcript line; bad keys press nothing and the model is told', async () => {
    const { callId, call } = await batchCall([toolTurn('send_digits', { digits: '2w#' }), toolTurn('send_digits', { digits: 'A' })]);
    expect(call.pressed).toEqual(['2w#']);
    const answer = call.documents.find((document) => document.texml.includes('<Play'))!;
    expect(answer.texml).toMatch(/<\/Say><Play digits="2w#"\/><Gather /);
    expect(call.heard).toContainEqual(expect.stringMatching(/^Echo: send_digits failed: digits may only hold 0-9/));
    const messages = await eventually(
      () => transcript(callId, 6),
      (list) => list.length >= 6,
      { what: 'the transcript' },
    );
    expect(messages).toContainEqual(['assistant', '[the agent pressed 2w#]']);
    expect(messages.filter(([, content]) => content.startsWith('[the agent pressed'))).toHaveLength(1);
  });
});
