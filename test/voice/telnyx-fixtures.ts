import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startFakeTelnyx, type FakeTelnyx, type FakeTelnyxCall, type TelnyxCallScript } from '../support/fake-telnyx.js';
import { startFakeDeepgram, type FakeDeepgram } from '../support/fake-deepgram.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';
import { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import { testRunner } from '../runner/fixtures.js';
import { connectTelnyx, randomNumber } from '../telephony/telnyx-connection.js';
import type { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';

// What the streaming tests on Telnyx share (telnyx-streaming.test.ts, telnyx-transfer.test.ts): the
// loopback Telnyx, Deepgram and ElevenLabs, a gateway pointed at them (no Twilio), an organization
// with a Telnyx connection and a number on it and another organization; a call of an agent placed on
// REST whose answer's <Stream> is opened as Telnyx opens it; the call on REST once it is so; its transcript.

export interface TelnyxVoiceWorld {
  telnyx: FakeTelnyx;
  deepgram: FakeDeepgram;
  elevenlabs: FakeElevenLabs;
  app: TestApp;
  acme: TestOrganization;
  other: TestOrganization;
  connectionId: string;
  /** The organization's number on the connection: the calls' From. */
  from: string;
  runner: CampaignRunner;
}

export { randomNumber };

/** The doubles, the gateway and the organizations, for a file's beforeAll; `name` tells its organizations apart. */
export async function startTelnyxVoice(name: string, keys: { deepgram: string; elevenlabs: string }): Promise<TelnyxVoiceWorld> {
  const telnyx = await startFakeTelnyx();
  const deepgram = await startFakeDeepgram({ apiKey: keys.deepgram });
  const elevenlabs = await startFakeElevenLabs({ apiKey: keys.elevenlabs });
  const app = await startTestApp({
    // No Twilio here: its API base is an address nothing answers on.
    telephony: { twilioApiBaseUrl: 'http://127.0.0.1:9', telnyxApiBaseUrl: telnyx.url, credentialsKey: randomBytes(32), publicUrl: undefined },
    providers: { deepgramApiKey: keys.deepgram, deepgramBaseUrl: deepgram.baseUrl, elevenlabsApiKey: keys.elevenlabs, elevenlabsBaseUrl: elevenlabs.baseUrl },
  });
  app.config.telephony.publicUrl = app.baseUrl;
  const acme = await app.organization(`Acme ${name}`);
  const other = await app.organization(`Other ${name}`);
  await acme.grantCredits(20);
  const { connectionId, from } = await connectTelnyx(acme, telnyx, '2000000000000000002');
  const runner = testRunner(app, { intervalMs: 20 });
  runner.start();
  return { telnyx, deepgram, elevenlabs, app, acme, other, connectionId, from, runner };
}

/** For a file's afterAll: every call's callbacks sent, then the gateway and the doubles closed. */
export async function stopTelnyxVoice(world: TelnyxVoiceWorld | undefined): Promise<void> {
  await world?.telnyx.settled();
  await world?.runner.stop();
  await world?.app.close();
  await Promise.all([world?.telnyx.close(), world?.deepgram.close(), world?.elevenlabs.close()]);
}

/** An active streaming agent of the organization (Deepgram, builtin/echo, ElevenLabs) with these fields: its id. */
export async function streamingAgent(world: TelnyxVoiceWorld, fields: Record<string, unknown>): Promise<string> {
  const agent = await world.acme.rest.post('/api/agents', {
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs', language: 'en-US' },
    ...fields,
  });
  if (agent.status !== 201) throw new Error(`the agent was refused: ${JSON.stringify(agent.body)}`);
  const activated = await world.acme.rest.post(`/api/agents/${agent.body.id}/activate`);
  if (activated.status !== 200) throw new Error(`the agent was not activated: ${JSON.stringify(activated.body)}`);
  return agent.body.id as string;
}

/** For a file's beforeEach: no Deepgram script, ElevenLabs reset and speaking at 4× speed. */
export function resetProviders(world: TelnyxVoiceWorld): void {
  world.deepgram.clearScript();
  world.elevenlabs.reset();
  world.elevenlabs.faults.speed = 4;
}

/** For a file's afterEach: what the Deepgram and ElevenLabs doubles refused of what they were sent (none expected). */
export const providerProblems = (world: TelnyxVoiceWorld) => [
  ...world.deepgram.problems.filter((problem) => problem.kind !== 'handshake'),
  ...world.elevenlabs.problems,
];

export function telnyxVoiceHelpers(world: () => TelnyxVoiceWorld) {
  const callOnceItIs = (id: string, done: (call: Record<string, any>) => boolean, what: string) =>
    eventually(async () => (await world().acme.rest.get(`/api/calls/${id}`)).body as Record<string, any>, done, { what, everyMs: 20 });
  return {
    /** The call on REST once `done` holds. */
    callOnceItIs,

    /**
     * Places a call of `agentId` (its script at the loopback Telnyx; `others` for any other number it
     * calls, e.g. a transfer's leg) and opens its stream as Telnyx does: the caller, our call and Telnyx's.
     */
    async streamingCall(
      agentId: string,
      script: TelnyxCallScript,
      others: (to: string) => TelnyxCallScript = () => ({ outcome: 'answered' }),
    ): Promise<{ caller: TelnyxMediaCaller; callId: string; callSid: string; call: FakeTelnyxCall }> {
      const { telnyx, acme, from } = world();
      const to = randomNumber();
      telnyx.script((number) => (number === to ? script : others(number)));
      const placed = await acme.rest.post('/api/calls', { to, agentId, from });
      if (placed.status !== 201) throw new Error(`the call was refused: ${JSON.stringify(placed.body)}`);
      const call = await eventually(
        async () => telnyx.calls().find((each) => each.to === to),
        (found) => (found?.streams.length ?? 0) > 0,
        { what: 'the stream TeXML' },
      );
      const caller = await TelnyxMediaCaller.open(call!.streams[0]!.url);
      if (!(caller instanceof TelnyxMediaCaller)) throw new Error(`refused: ${caller.refused}`);
      caller.start(call!.sid, placed.body.id);
      return { caller, callId: placed.body.id, callSid: call!.sid, call: call! };
    },

    /** The call's stored transcript once it has `count` messages: role and content. */
    async transcript(callId: string, count: number): Promise<[string, string][]> {
      const row = await callOnceItIs(callId, (value) => Boolean(value.conversationId), 'the conversation link');
      const messages = await eventually(
        async () =>
          (await world().acme.rest.get(`/api/conversations/${row.conversationId}/messages?limit=20`)).body.data as { role: string; content: string }[],
        (list) => list.length >= count,
        { what: `${count} messages of the transcript` },
      );
      return messages.map((message) => [message.role, message.content]);
    },

    /** Until Telnyx has returned `count` marks of finished replies (`r<n>:done`): the caller heard them to the end. */
    repliesHeard: (caller: TelnyxMediaCaller, count: number) =>
      caller.waitFor(() => caller.returnedMarks.filter((name) => /:done$/.test(name)).length >= count, `${count} replies played`),
  };
}
