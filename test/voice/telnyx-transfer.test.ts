import { callerSpeech } from '../support/media-stream-client.js';
import { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import type { FakeTelnyxCall, TelnyxCallScript } from '../support/fake-telnyx.js';
import { eventually } from '../helpers/eventually.js';
import {
  providerProblems,
  resetProviders,
  startTelnyxVoice,
  stopTelnyxVoice,
  streamingAgent,
  telnyxVoiceHelpers,
  type TelnyxVoiceWorld,
} from './telnyx-fixtures.js';
import { answeredColdTransfer, BILLING, FRONT, SALES, transferOf as transferOfCall } from './transfer-fixtures.js';

// transfer_call on a Telnyx call (TeXML), through the real doors, as transfer.test.ts does on Twilio: a
// streaming agent (Deepgram, builtin/echo, ElevenLabs) on a call placed through the loopback Telnyx,
// whose every request is checked against Telnyx's vendored OpenAPI (telnyx-texml.schemas.md) and whose
// TeXML <Dial> and <Conference> attributes against the TeXML pages. Cold: the live call is updated
// (UpdateCall Texml) to say a line and <Dial action> the destination; the dial's signed report is
// recorded. Warm: the caller waits in a <Conference> room while the person's own leg (InitiateCall with
// its Texml, Timeout 30 s) hears the briefing and joins; a leg that reaches no one gives the caller back
// to the agent; a caller gone during the hold, or Telnyx refusing the caller's update, leaves nothing
// ringing (UpdateCall Status=completed).

const DEEPGRAM_KEY = 'dg-test-key-telnyx-transfer';
const ELEVENLABS_KEY = 'xi-test-key-telnyx-transfer';
const GREETING = 'Hello, this is the Acme line on Telnyx.';

let world: TelnyxVoiceWorld;
let agentId: string;
let refusedBefore = 0;

beforeAll(async () => {
  world = await startTelnyxVoice('Telnyx transfer', { deepgram: DEEPGRAM_KEY, elevenlabs: ELEVENLABS_KEY });
  agentId = await streamingAgent(world, {
    name: 'Receptionist',
    instructions: 'You answer and hand callers on.',
    firstMessage: GREETING,
    transferDestinations: [BILLING, FRONT, SALES],
  });
}, 60_000);

afterAll(() => stopTelnyxVoice(world));

beforeEach(() => {
  resetProviders(world);
  refusedBefore = world.telnyx.refusals().length;
});

afterEach(() => {
  expect(providerProblems(world)).toEqual([]);
  // Nothing the gateway sent Telnyx, nor any TeXML it answered, broke what Telnyx publishes.
  expect(world.telnyx.refusals().slice(refusedBefore)).toEqual([]);
});

const { callOnceItIs, streamingCall, transcript, repliesHeard } = telnyxVoiceHelpers(() => world);
const transferOf = (callId: string) => transferOfCall(world.acme, callId);
const base = () => `${world.app.baseUrl}/telephony/telnyx/${world.connectionId}`;
const texml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/**
 * A streaming call whose caller, once greeted, has the agent transfer to `destination` (builtin/echo
 * calls the tool it is told to); `others` scripts the person's leg. The agent's stream has ended when it resolves.
 */
async function transferred(destination: string, script: Omit<TelnyxCallScript, 'holdUntil'>, others?: (to: string) => TelnyxCallScript) {
  let hangUp = () => undefined as void;
  const hold = new Promise<void>((resolve) => (hangUp = resolve));
  world.deepgram.script([`call transfer_call {"destination": "${destination}"}`]);
  const opened = await streamingCall(agentId, { ...script, holdUntil: hold, durationSeconds: 120 }, others);
  await repliesHeard(opened.caller, 1);
  await opened.caller.sendAudio(callerSpeech(600, 700), 20);
  // The agent's stream ends once Telnyx took the transfer.
  expect((await opened.caller.closed).code).toBe(1000);
  return { ...opened, hangUp };
}

/** The person's leg, once Telnyx has it: the call to `number` whose status callback names our call. */
const legOf = (callId: string, number: string) =>
  eventually(
    async () => world.telnyx.calls().find((each) => each.to === number && each.statusCallback?.includes(`callId=${callId}`)),
    (found) => found !== undefined,
    { what: 'the leg to the person', everyMs: 20 },
  ) as Promise<FakeTelnyxCall>;

describe('a cold transfer on a Telnyx call', () => {
  it('updates the live call to say the line and <Dial action> the number; the stream ends; the signed report is recorded; record, transcript and event say so', async () => {
    const { callId, call, hangUp } = await transferred(BILLING.name, { outcome: 'answered', dial: { status: 'completed', durationSeconds: 95 } });
    try {
      await eventually(
        async () => call.dialReports.length,
        (count) => count === 1,
        { what: 'the <Dial action> report', everyMs: 20 },
      );
      expect(call.updates).toEqual([
        {
          Texml: texml(
            '<Say voice="Polly.Joanna">Connecting you to Billing desk.</Say>' +
              `<Dial action="${base()}/dial?callId=${callId}" method="POST"><Number>+14155550100</Number></Dial>`,
          ),
        },
      ]);
      expect(call.heard).toEqual(['Connecting you to Billing desk.']);
      expect(call.transfers).toEqual([BILLING.number]);
      // The report (TeXML's words, signed as every callback) was taken; its answer hangs up: the agent has left.
      expect(call.dialReports[0]).toMatchObject({ status: 200, fields: { CallSid: call.sid, DialCallStatus: 'completed', DialCallDuration: '95' } });
      expect(call.documents.at(-1)!.texml).toContain('<Hangup/>');
      expect(call.hungUp).toBe(true);
      const transfer = await eventually(
        () => transferOf(callId),
        (value) => value?.dialStatus === 'completed',
        { what: 'the dial’s outcome on the call', everyMs: 20 },
      );
      expect(transfer).toEqual(answeredColdTransfer(BILLING, 95));
      expect(await transcript(callId, 3)).toEqual([
        ['assistant', GREETING],
        ['user', `call transfer_call {"destination": "${BILLING.name}"}`],
        ['assistant', '[the call was transferred to Billing desk]'],
      ]);
      const events = (await world.acme.rest.get(`/api/events?type=call.transferred&callId=${callId}`)).body.data as { payload: Record<string, any> }[];
      expect(events.map((event) => event.payload.transfer)).toEqual([expect.objectContaining({ destinationName: BILLING.name, mode: 'cold' })]);
      expect(await callOnceItIs(callId, (value) => value.status === 'completed', 'the call’s end')).toMatchObject({ carrier: 'telnyx' });
      expect((await world.other.rest.get(`/api/calls/${callId}`)).status).toBe(404);
    } finally {
      hangUp();
    }
  }, 30_000);

  it('to a sip: URI that does not answer: <Dial><Sip>, and the report is answered with the media stream again; the agent says why', async () => {
    const { callId, call, hangUp } = await transferred(FRONT.name, { outcome: 'answered', dial: { status: 'no-answer' } });
    try {
      expect(call.updates[0]!.Texml).toContain(`<Dial action="${base()}/dial?callId=${callId}" method="POST"><Sip>sip:front@pbx.example.com</Sip></Dial>`);
      const stream = await eventually(
        async () => call.streams[1],
        (found) => found !== undefined,
        { what: 'the stream the report was answered with', everyMs: 20 },
      );
      expect(stream!.from).toBe(`${base()}/dial?callId=${callId}`);
      expect(stream!.parameters).toEqual({ callId });
      const back = await TelnyxMediaCaller.open(stream!.url);
      if (!(back instanceof TelnyxMediaCaller)) throw new Error(`the reconnected stream was refused: ${back.refused}`);
      back.start(call.sid, callId);
      expect((await transcript(callId, 4))[3]).toEqual(['assistant', "I'm sorry, Front desk didn't answer. I'm back with you: how else can I help?"]);
      await back.waitFor(() => back.heard().length > 0, 'the agent’s return line');
      expect(await transferOf(callId)).toMatchObject({ dialStatus: 'no-answer', dialDurationSeconds: 0, returnedAt: expect.stringMatching(/^\d{4}-/) });
      const failed = (await world.acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data as unknown[];
      expect(failed).toHaveLength(1);
      expect(call.hungUp).toBe(false);
      back.stop();
    } finally {
      hangUp();
    }
  }, 30_000);
});

describe('a warm transfer on a Telnyx call (the caller held in a <Conference> room, the person briefed on a leg of their own)', () => {
  const room = (callId: string) => `transfer-${callId}`;

  it('answered: the caller waits in the room, the person hears the briefing then joins; the leg’s end is recorded', async () => {
    let hangUpPerson = () => undefined as void;
    const person: TelnyxCallScript = { outcome: 'answered', durationSeconds: 64, holdUntil: new Promise<void>((resolve) => (hangUpPerson = resolve)) };
    const { callId, call, hangUp } = await transferred(SALES.name, { outcome: 'answered' }, (to) => (to === SALES.number ? person : { outcome: 'answered' }));
    try {
      expect(call.updates).toEqual([
        {
          Texml: texml(
            '<Say voice="Polly.Joanna">Please hold while I connect you to Sales desk.</Say>' +
              `<Dial action="${base()}/dial?callId=${callId}" method="POST">` +
              `<Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">${room(callId)}</Conference></Dial>`,
          ),
        },
      ]);
      const leg = await legOf(callId, SALES.number);
      // The leg: from the call's number, ringing 30 s, its TeXML given (not fetched), one status callback for its end.
      expect(leg).toMatchObject({
        from: world.from,
        timeoutSeconds: 30,
        statusCallback: `${base()}/transfer-leg?callId=${callId}`,
        statusCallbackEvents: ['completed'],
      });
      await eventually(
        async () => world.telnyx.room(room(callId)),
        (state) => state?.started === true && state.participants.length === 2,
        { what: 'the caller and the person in the room', everyMs: 20 },
      );
      expect(world.telnyx.room(room(callId))!.participants.sort()).toEqual([call.sid, leg.sid].sort());
      const transfer = await transferOf(callId);
      const briefing = String(transfer!.briefing);
      expect(briefing).toMatch(/^This is Receptionist, with a caller for Sales desk\. A caller about a new order for/);
      expect(leg.texml).toBe(
        texml(
          `<Say voice="Polly.Joanna">${escaped(briefing)}</Say>` +
            `<Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false">${room(callId)}</Conference></Dial>`,
        ),
      );
      expect(leg.documents.map((document) => document.url)).toEqual(['InitiateCall']);
      expect(leg.heard).toEqual([briefing]);
      expect(call.heard).toEqual(['Please hold while I connect you to Sales desk.']);
      expect(transfer).toMatchObject({ destinationName: SALES.name, mode: 'warm', dialStatus: null });
      expect((await transcript(callId, 3))[2]).toEqual(['assistant', `[the call was transferred to Sales desk; they were briefed: ${briefing}]`]);

      // The person hangs up: the leg's end is recorded, and the room ends for the caller too (its <Dial action>, then a hang-up).
      hangUpPerson();
      expect(
        await eventually(
          () => transferOf(callId),
          (value) => value?.dialStatus === 'completed',
          { what: 'the leg’s end on the call', everyMs: 20 },
        ),
      ).toMatchObject({ dialStatus: 'completed', dialDurationSeconds: 64, returnedAt: null });
      await callOnceItIs(callId, (value) => value.status === 'completed', 'the caller’s end');
      expect(world.telnyx.room(room(callId))).toMatchObject({ ended: true, participants: [] });
      expect(call.dialReports).toEqual([expect.objectContaining({ status: 200, fields: expect.objectContaining({ DialCallStatus: 'completed' }) })]);
      expect(call.hungUp).toBe(true);
      expect(call.streams).toHaveLength(1);
      expect((await world.acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data).toEqual([]);
    } finally {
      hangUpPerson();
      hangUp();
    }
  }, 30_000);

  it('the person does not answer: the caller is moved out of the room back to the agent, which is told why and says so', async () => {
    // It rings until the test says nobody answered (Telnyx's Timeout, never waited for here).
    let ringOut = () => undefined as void;
    const unanswered: TelnyxCallScript = { outcome: 'no-answer', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) };
    const { callId, call, hangUp } = await transferred(SALES.name, { outcome: 'answered' }, (to) =>
      to === SALES.number ? unanswered : { outcome: 'answered' },
    );
    try {
      await eventually(
        async () => world.telnyx.room(room(callId)),
        (state) => state?.participants.length === 1,
        { what: 'the caller waiting in the room', everyMs: 20 },
      );
      expect(world.telnyx.room(room(callId))).toMatchObject({ participants: [call.sid], started: false });
      ringOut();
      // Not a <Dial action> answer: the gateway updates the caller's call (UpdateCall), which leaves the room.
      const stream = await eventually(
        async () => call.streams[1],
        (found) => found !== undefined,
        { what: 'the caller’s stream again', everyMs: 20 },
      );
      expect(stream!.from).toBe('UpdateCall');
      expect(call.updates).toHaveLength(2);
      expect(world.telnyx.room(room(callId))?.participants ?? []).toEqual([]);
      const back = await TelnyxMediaCaller.open(stream!.url);
      if (!(back instanceof TelnyxMediaCaller)) throw new Error(`the reconnected stream was refused: ${back.refused}`);
      back.start(call.sid, callId);
      expect((await transcript(callId, 4))[3]).toEqual(['assistant', "I'm sorry, Sales desk didn't answer. I'm back with you: how else can I help?"]);
      await back.waitFor(() => back.heard().length > 0, 'the agent’s return line');
      expect(await transferOf(callId)).toMatchObject({ mode: 'warm', dialStatus: 'no-answer', returnedAt: expect.any(String) });
      const failed = (await world.acme.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data as { payload: Record<string, any> }[];
      expect(failed.map((event) => event.payload.transfer.dialStatus)).toEqual(['no-answer']);
      expect((await world.other.rest.get(`/api/events?type=call.transfer_failed&callId=${callId}`)).body.data).toEqual([]);
      back.stop();
    } finally {
      ringOut();
      hangUp();
    }
  }, 30_000);

  it('the caller hangs up during the hold: the person’s leg, still ringing, is ended (UpdateCall Status=completed: canceled), nothing is left ringing', async () => {
    let ringOut = () => undefined as void;
    const ringing: TelnyxCallScript = { outcome: 'answered', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) };
    const { callId, hangUp } = await transferred(SALES.name, { outcome: 'answered' }, (to) => (to === SALES.number ? ringing : { outcome: 'answered' }));
    try {
      const leg = await legOf(callId, SALES.number);
      await eventually(
        async () => leg.status,
        (status) => status === 'ringing',
        { what: 'the leg ringing', everyMs: 20 },
      );
      hangUp();
      await eventually(
        async () => leg.status,
        (status) => status === 'canceled',
        { what: 'the leg ended', everyMs: 20 },
      );
      expect(leg.updates).toEqual([{ Status: 'completed' }]);
      expect(world.telnyx.room(room(callId))?.started ?? false).toBe(false);
      expect((await callOnceItIs(callId, (value) => value.status === 'completed', 'the caller’s end')).status).toBe('completed');
      // The leg's own report came after the caller's end: nothing more is recorded.
      expect(await transferOf(callId)).toMatchObject({ dialStatus: null });
    } finally {
      ringOut();
    }
  }, 30_000);
});

describe('Telnyx refusing a transfer', () => {
  it('refusing the caller’s update after the leg was placed: the ringing leg is ended, nothing is recorded, the call goes on with the agent', async () => {
    let ringOut = () => undefined as void;
    let hangUp = () => undefined as void;
    const ringing: TelnyxCallScript = { outcome: 'answered', ringUntil: new Promise<void>((resolve) => (ringOut = resolve)) };
    world.deepgram.script([`call transfer_call {"destination": "${SALES.name}"}`]);
    const { callId, caller, call } = await streamingCall(
      agentId,
      { outcome: 'answered', holdUntil: new Promise<void>((resolve) => (hangUp = resolve)) },
      (to) => (to === SALES.number ? ringing : { outcome: 'answered' }),
    );
    try {
      await repliesHeard(caller, 1);
      world.telnyx.faults({ updateStatus: 500 });
      await caller.sendAudio(callerSpeech(600, 700), 20);
      const leg = await legOf(callId, SALES.number);
      // Ended when the refusal came back, before the model was told: nobody answers into an empty room.
      await eventually(
        async () => leg.status,
        (status) => status === 'canceled',
        { what: 'the leg ended', everyMs: 20 },
      );
      expect(leg.updates).toEqual([{ Status: 'completed' }]);
      expect(call.updates).toEqual([]);
      expect(await transferOf(callId)).toBeNull();
      const [events] = await world.app.sql<{ n: string | number }>(`select count(*) as n from events where type = 'call.transferred' and payload->>'id' = ?`, [
        callId,
      ]);
      expect(Number(events!.n)).toBe(0);
      // Still the agent's stream, still the call: nothing was handed on.
      expect((await world.acme.rest.get(`/api/calls/${callId}`)).body).toMatchObject({ status: 'in_progress', transfer: null });
      expect(call.streams).toHaveLength(1);
      // The one refusal is the injected one; afterEach checks there is no other.
      expect(world.telnyx.refusals().slice(refusedBefore)).toEqual([expect.objectContaining({ status: 500, problem: 'The call could not be updated now' })]);
      refusedBefore += 1;
      caller.stop();
    } finally {
      world.telnyx.faults({});
      ringOut();
      hangUp();
    }
  }, 30_000);
});

describe('a Telnyx transfer’s reports', () => {
  it('unsigned or signed with another key → 403; signed, for a call with no transfer → answered (a hang-up) and ignored', async () => {
    const { callId, callSid, caller, hangUp } = await (async () => {
      let end = () => undefined as void;
      const opened = await streamingCall(agentId, { outcome: 'answered', holdUntil: new Promise<void>((resolve) => (end = resolve)) });
      return { ...opened, hangUp: end };
    })();
    try {
      const body = new URLSearchParams({
        AccountSid: world.telnyx.accountSid,
        CallSid: callSid,
        CallStatus: 'in-progress',
        DialCallStatus: 'busy',
        DialCallDuration: '0',
      }).toString();
      const post = (path: string, headers: Record<string, string>) =>
        fetch(`${base()}/${path}?callId=${callId}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
      expect((await post('dial', {})).status).toBe(403);
      expect((await post('transfer-leg', {})).status).toBe(403);
      world.telnyx.faults({ forgeSignatures: true });
      const forged = world.telnyx.signedHeaders(body);
      world.telnyx.faults({});
      expect((await post('dial', forged)).status).toBe(403);
      const signed = await post('dial', world.telnyx.signedHeaders(body));
      expect(signed.status).toBe(200);
      expect(await signed.text()).toContain('<Hangup/>');
      expect((await post('transfer-leg', world.telnyx.signedHeaders(body))).status).toBe(204);
      expect(await transferOf(callId)).toBeNull();
      caller.stop();
    } finally {
      hangUp();
    }
  }, 30_000);
});
