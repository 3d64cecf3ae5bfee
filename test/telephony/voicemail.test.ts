import { randomUUID } from 'node:crypto';
import { postAsTwilio } from '../support/twilio-webhook.js';
import {
  CreateProgramDocument,
  ProgramVoicemailDocument,
  UpdateProgramVoicemailDocument,
  VoicemailCallsDocument,
  VoicemailOutcomesDocument,
} from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { startFakeTwilio, type CallScript, type FakeCall, type FakeTwilio } from '../support/fake-twilio.js';
import { FLOW, runUntilCompleted, startTwilioApp, twilioCampaign, type TwilioCampaign } from './fixtures.js';
import { createAudience, fieldsOf } from '../programs/fixtures.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';

// Voicemail after the beep (issue #44): campaign calls ask Twilio for asynchronous detection, so the
// answer is spoken to at once; a machine's verdict (AsyncAmdStatusCallback, signed) stops the agent
// and the program's message is left by updating the live call, which ends voicemail_left.

let fake: FakeTwilio;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  fake = await startFakeTwilio();
  app = await startTwilioApp(fake);
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

const MESSAGE = 'Hi {{contact.name}}, this is {{organization.name}} about your appointment. Please call us back.';

/** Runs a Twilio campaign to its end, each phone living as `scripts` says (by its place in the audience). */
async function run(program: Record<string, unknown>, scripts: CallScript[]): Promise<{ campaign: TwilioCampaign; calls: Map<string, FakeCall> }> {
  const campaign = await twilioCampaign(acme, fake, { contacts: scripts.length, callsPerSecond: 20, program });
  const byPhone = new Map(campaign.phones.map((phone, index) => [phone, scripts[index]!]));
  fake.script((to) => byPhone.get(to) ?? { outcome: 'answered' });
  await runUntilCompleted(app, acme, campaign.executionId, fake);
  return {
    campaign,
    calls: new Map(
      fake
        .calls()
        .filter((call) => byPhone.has(call.to))
        .map((call) => [call.to, call]),
    ),
  };
}

const callsOf = (executionId: string) =>
  app.sql<{ id: string; to_number: string; outcome: string | null; answered_by: string | null; carrier_call_id: string; reached_node_ids: string[] }>(
    'select id, to_number, outcome, answered_by, carrier_call_id, reached_node_ids from calls where execution_id = ?',
    [executionId],
  );

/** A verdict as Twilio would post it for `callId` to a connection's /amd route, signed with `token` (none: unsigned). */
async function postVerdict(connectionId: string, callId: string, fields: Record<string, string>, token: string | null = fake.authToken) {
  const url = `${app.baseUrl}/telephony/twilio/${connectionId}/amd?callId=${callId}`;
  const params = { AccountSid: fake.accountSid, MachineDetectionDuration: '1200', ...fields };
  return postAsTwilio(url, params, token);
}

const updatesTo = (callSid: string) => fake.requests().filter((request) => request.method === 'POST' && request.path.endsWith(`/Calls/${callSid}.json`));

describe('voicemail after the beep, and no dead air at the answer', () => {
  let left: { campaign: TwilioCampaign; calls: Map<string, FakeCall> };
  const [machinePhone, humanPhone] = [0, 1];

  beforeAll(async () => {
    left = await run({ voicemail: { action: 'leave', message: MESSAGE } }, [
      // Twilio may say a machine's greeting started before it says it ended: the first is waited out.
      { outcome: 'voicemail', answeredBy: ['machine_start', 'machine_end_beep'], durationSeconds: 20 },
      { outcome: 'answered', answeredBy: ['human'], durationSeconds: 30 },
    ]);
  });

  it('asks Twilio for detection in the background, and speaks the answer without waiting for it', async () => {
    const { campaign, calls } = left;
    for (const call of calls.values()) {
      expect(call.machineDetection).toBe('DetectMessageEnd');
      expect(call.asyncAmd).toEqual({
        callback: expect.stringMatching(new RegExp(`^${app.baseUrl}/telephony/twilio/${campaign.connectionId}/amd\\?callId=[0-9a-f-]{36}$`)),
        method: 'POST',
      });
      // The answer's TwiML is the flow's answered words, for the machine too: nothing waited for the verdict.
      expect(call.twimlStatus).toBe(200);
      expect(call.twiml).toContain(FLOW.nodes[1]!.label);
    }
    const creates = fake
      .requests()
      .filter((request) => request.method === 'POST' && request.path.endsWith('/Calls.json') && campaign.phones.includes(request.form.To!));
    expect(creates.map((request) => [request.form.AsyncAmd, request.form.MachineDetectionTimeout])).toEqual([
      ['true', '30'],
      ['true', '30'],
    ]);
  });

  it('leaves the message after the beep: the live call is updated to say it and hang up, and ends voicemail_left', async () => {
    const { campaign, calls } = left;
    const machine = calls.get(campaign.phones[machinePhone]!)!;
    const contacts = (await acme.rest.get('/api/contacts?limit=100')).body.data as { name: string; phone: string }[];
    const contact = contacts.find((candidate) => candidate.phone === machine.to)!;
    const message = `Hi ${contact.name}, this is Acme about your appointment. Please call us back.`;
    expect(machine.updates).toHaveLength(1);
    expect(machine.updates[0]!.Twiml).toContain(`${message}</Say><Hangup/>`);
    expect(machine.heard.at(-1)).toBe(message);
    expect(machine.hungUp).toBe(true);
    const rows = await callsOf(campaign.executionId);
    const row = rows.find((call) => call.to_number === machine.to)!;
    expect(row).toMatchObject({ outcome: 'voicemail_left', answered_by: 'machine' });

    // REST and GraphQL list it under its outcome; the execution counts it; the CSV says it.
    const rest = await acme.rest.get(`/api/calls?executionId=${campaign.executionId}&outcome=voicemail_left`);
    expect(rest.body.data.map((call: { id: string }) => call.id)).toEqual([row.id]);
    const graphql = await acme.graphql.ok(VoicemailCallsDocument, { executionId: campaign.executionId, outcome: 'voicemail_left' });
    expect(graphql.calls.data.map((call) => call.id)).toEqual([row.id]);
    const execution = (await acme.rest.get(`/api/executions/${campaign.executionId}`)).body;
    expect(execution.outcomes).toMatchObject({ answered: 1, voicemail: 0, voicemailLeft: 1 });
    expect(execution.contactsCompleted).toBe(2);
    const outcomes = await acme.graphql.ok(VoicemailOutcomesDocument, { id: campaign.executionId });
    expect(outcomes.execution.outcomes).toEqual({ answered: 1, voicemail: 0, voicemailLeft: 1 });
    const csv = await fetch(`${app.baseUrl}/api/executions/${campaign.executionId}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
    const [header, ...lines] = (await csv.text()).trim().split(/\r?\n/);
    const column = header!.split(',').indexOf('outcome');
    const line = lines.find((text) => text.includes(row.id))!;
    expect(line.split(',')[column]).toBe('voicemail_left');
  });

  it('changes nothing on a human verdict: no update, the call answered', async () => {
    const { campaign, calls } = left;
    const human = calls.get(campaign.phones[humanPhone]!)!;
    expect(human.updates).toEqual([]);
    expect(human.heard.some((line) => line.includes('Please call us back'))).toBe(false);
    const row = (await callsOf(campaign.executionId)).find((call) => call.to_number === human.to)!;
    expect(row).toMatchObject({ outcome: 'answered', answered_by: 'human' });
  });

  it('ignores a verdict for an ended call, an unknown call or another organization’s, and refuses an unsigned one', async () => {
    const { campaign, calls } = left;
    const machine = calls.get(campaign.phones[machinePhone]!)!;
    const row = (await callsOf(campaign.executionId)).find((call) => call.to_number === machine.to)!;
    const before = updatesTo(machine.sid).length;

    const ended = await postVerdict(campaign.connectionId, row.id, { CallSid: machine.sid, AnsweredBy: 'machine_end_beep' });
    expect(ended.status).toBe(200);
    const unknown = await postVerdict(campaign.connectionId, randomUUID(), { CallSid: machine.sid, AnsweredBy: 'machine_end_beep' });
    expect(unknown.status).toBe(200);
    // Another organization's connection to the same account: its signature holds, our call is not its call.
    const theirs = await other.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
    expect(theirs.status).toBe(201);
    const foreign = await postVerdict(theirs.body.id, row.id, { CallSid: machine.sid, AnsweredBy: 'machine_end_beep' });
    expect(foreign.status).toBe(200);
    const unsigned = await postVerdict(campaign.connectionId, row.id, { CallSid: machine.sid, AnsweredBy: 'machine_end_beep' }, null);
    expect(unsigned.status).toBe(403);
    const forged = await postVerdict(campaign.connectionId, row.id, { CallSid: machine.sid, AnsweredBy: 'machine_end_beep' }, 'not-the-token');
    expect(forged.status).toBe(403);

    expect(updatesTo(machine.sid)).toHaveLength(before);
    expect((await callsOf(campaign.executionId)).find((call) => call.id === row.id)).toMatchObject({ outcome: 'voicemail_left' });
  });
});

describe('the other ways a machine is met', () => {
  it('hangs up with action hang_up: the agent stops, nothing is left, the outcome is voicemail', async () => {
    const { campaign, calls } = await run({ voicemail: { action: 'hang_up' } }, [{ outcome: 'voicemail', durationSeconds: 5 }]);
    const machine = [...calls.values()][0]!;
    expect(machine.updates).toHaveLength(1);
    expect(machine.updates[0]!.Twiml).toContain('<Hangup/>');
    expect(machine.updates[0]!.Twiml).not.toContain('<Say');
    expect((await callsOf(campaign.executionId))[0]).toMatchObject({ outcome: 'voicemail', answered_by: 'machine' });
  });

  it('leaves the flow’s voicemail branch when the program sets no message', async () => {
    const { campaign, calls } = await run({}, [{ outcome: 'voicemail', durationSeconds: 5 }]);
    const machine = [...calls.values()][0]!;
    expect(machine.updates).toHaveLength(1);
    expect(machine.updates[0]!.Twiml).toContain(`${FLOW.nodes[2]!.label}</Say><Hangup/>`);
    const [row] = await callsOf(campaign.executionId);
    expect(row).toMatchObject({ outcome: 'voicemail_left', answered_by: 'machine' });
    // The answer walked the answered branch; the verdict the voicemail branch.
    expect(row!.reached_node_ids).toEqual(['start', 'hello', 'end', 'vm']);
  });

  it('ignores a machine verdict later than 45 s after the answer (the person has been talking that long)', async () => {
    const { campaign, calls } = await run({ voicemail: { action: 'leave', message: MESSAGE } }, [
      { outcome: 'voicemail', answeredBy: ['machine_end_beep'], detectionMs: 60_000, durationSeconds: 70 },
    ]);
    const call = [...calls.values()][0]!;
    expect(call.updates).toEqual([]);
    // Twilio's last word is still a machine: a voicemail, with nothing left on it.
    expect((await callsOf(campaign.executionId))[0]).toMatchObject({ outcome: 'voicemail' });
  });
});

describe('the voicemail setting on both doors', () => {
  let flowId: string;
  let audienceId: string;
  beforeAll(async () => {
    flowId = (await acme.rest.post('/api/call-flows', FLOW)).body.id;
    audienceId = (await createAudience(acme, 1)).id;
  });
  const base = () => ({ name: 'Voicemail', kind: 'campaign', flowId, audienceId });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['leave without a message', { action: 'leave' }, ['voicemail.message']],
    ['a message of blanks', { message: '   ' }, ['voicemail.message']],
    ['a message over 1000 characters', { message: 'x'.repeat(1001) }, ['voicemail.message']],
    ['a template that does not parse', { message: 'Hi {{#contact.name}}' }, ['voicemail.message']],
    ['a partial', { message: 'Hi {{> other}}' }, ['voicemail.message']],
    ['an unknown action', { action: 'shout', message: 'Hi' }, ['voicemail.action']],
  ])('refuses %s with the same error on both doors', async (_, voicemail, fields) => {
    const input = { ...base(), voicemail };
    const rest = await acme.rest.post('/api/programs', input);
    const graphql = await acme.graphql.run(CreateProgramDocument, { input: input as never });
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual(fields);
    expect(fieldsOf(graphql.errors?.[0]?.extensions.errors)).toEqual(fields);
  });

  it('is stored with its default action, read on both doors, cleared by null; another organization gets 404', async () => {
    const created = await acme.rest.post('/api/programs', { ...base(), voicemail: { message: MESSAGE } });
    expect(created.status).toBe(201);
    expect(created.body.voicemail).toEqual({ action: 'leave', message: MESSAGE });
    const read = await acme.graphql.ok(ProgramVoicemailDocument, { id: created.body.id });
    expect(read.program.voicemail).toEqual({ action: 'leave', message: MESSAGE });
    const hangUp = await acme.graphql.ok(UpdateProgramVoicemailDocument, { id: created.body.id, input: { voicemail: { action: 'hang_up' as never } } });
    expect(hangUp.updateProgram.voicemail).toEqual({ action: 'hang_up', message: null });
    const cleared = await acme.rest.put(`/api/programs/${created.body.id}`, { voicemail: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.voicemail).toBeNull();

    expect((await other.rest.get(`/api/programs/${created.body.id}`)).status).toBe(404);
    expect((await other.rest.put(`/api/programs/${created.body.id}`, { voicemail: { message: 'Hi' } })).status).toBe(404);
    const theirs = await other.graphql.run(UpdateProgramVoicemailDocument, { id: created.body.id, input: { voicemail: { message: 'Hi' } } });
    expect(theirs.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const seen = await other.graphql.run(ProgramVoicemailDocument, { id: created.body.id });
    expect(seen.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});

describe('the simulator', () => {
  it('leaves the message too when a machine answers', async () => {
    const flow = await acme.rest.post('/api/call-flows', FLOW);
    const audience = await createAudience(acme, 2);
    const program = await acme.rest.post('/api/programs', {
      name: 'Simulated voicemail',
      kind: 'campaign',
      flowId: flow.body.id,
      audienceId: audience.id,
      voicemail: { message: MESSAGE },
    });
    expect(program.status).toBe(201);
    expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
    await acme.grantCredits(10);
    const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
    expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
    const dialer = new SimulatedDialer({ seed: 'voicemail', speedMs: 0, weights: { answered: 0, no_answer: 0, busy: 0, voicemail: 1, failed: 0 } });
    await runUntilCompleted(app, acme, execution.id, null, { dialer, intervalMs: 20 });
    const rows = await callsOf(execution.id);
    expect(rows.map((row) => [row.outcome, row.answered_by])).toEqual([
      ['voicemail_left', 'machine'],
      ['voicemail_left', 'machine'],
    ]);
    expect((await acme.rest.get(`/api/executions/${execution.id}`)).body.outcomes).toMatchObject({ voicemailLeft: 2, voicemail: 0 });
  });
});
