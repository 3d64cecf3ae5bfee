import { CreateProgramDocument, ProgramScreeningDocument, ScreenedConversationDocument, UpdateProgramScreeningDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience, fieldsOf } from '../programs/fixtures.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { MediaStreamClient } from '../support/media-stream-client.js';
import { FLOW, startTwilioApp } from '../telephony/fixtures.js';
import { eventually, stsHelpers } from './sts-fixtures.js';

// Call screeners (issue #44): on an outbound call the agent is told what to answer an automated
// screener with (the program's screeningResponse, or the default), rendered for the call; the model
// tells a screener from its words (no carrier reports one). Inbound calls get no such section.

const SCREENED = 'call screener';

let twilioFake: FakeTwilio;
let realtime: FakeRealtime;
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let connectionId: string;
let agentId: string;
let contactId: string;
let contactName: string;

beforeAll(async () => {
  twilioFake = await startFakeTwilio();
  realtime = await startFakeRealtime();
  app = await startTwilioApp(twilioFake, undefined, { providers: { openaiApiKey: 'sk-test-screening-key', openaiRealtimeUrl: realtime.url } });
  acme = await app.organization('Acme screening');
  other = await app.organization('Other screening');
  const connection = await acme.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: twilioFake.accountSid, authToken: twilioFake.authToken });
  expect(connection.status).toBe(201);
  connectionId = connection.body.id;
  const agent = await acme.rest.post('/api/agents', {
    name: 'Ada',
    instructions: 'You confirm deliveries for {{contact.name}}.',
    policy: 'Never promise a delivery before nine.',
    modelConfig: { model: 'openai/gpt-realtime' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' },
    firstMessageMode: 'wait_for_caller',
  });
  expect(agent.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  agentId = agent.body.id;
  contactId = (await createAudience(acme, 1)).contactIds[0]!;
  contactName = (await app.sql<{ name: string }>('select name from contacts where id = ?', [contactId]))[0]!.name;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await realtime?.close();
  await twilioFake?.close();
});

afterEach(() => expect(realtime.problems).toEqual([]));

const { liveCall, answeredStream, callRow } = stsHelpers(() => ({ app, twilioFake, acme }));

/** The instructions the provider's session was given for a call, and the call's conversation once it has one. */
async function sessionInstructions(call: { programId?: string; direction?: 'inbound' | 'outbound'; variables?: Record<string, string> }) {
  const callId = await liveCall({ org: acme, agentId, contactId, connectionId });
  await app.sql('update calls set program_id = ?, direction = ?, variables = ?::jsonb where id = ?', [
    call.programId ?? null,
    call.direction ?? 'outbound',
    call.variables ? JSON.stringify(call.variables) : null,
    callId,
  ]);
  const next = realtime.nextSession();
  const { url, callSid } = await answeredStream(callId);
  const caller = await MediaStreamClient.open(url, twilioFake.authToken);
  if (!(caller instanceof MediaStreamClient)) throw new Error(`media stream refused: ${caller.refused}`);
  caller.start(callId, callSid);
  const session = await next;
  await session.waitFor('session.update');
  const instructions = String(session.sessionUpdates()[0]!.session.instructions);
  const row = await eventually(
    () => callRow(callId),
    (value) => Boolean(value.conversation_id),
    'the conversation link',
  );
  caller.stop();
  caller.hangUp();
  await session.closed;
  return { instructions, conversationId: row.conversation_id! };
}

async function program(screeningResponse?: string | null): Promise<string> {
  const flowId = (await acme.rest.post('/api/call-flows', FLOW)).body.id;
  const audienceId = (await createAudience(acme, 1)).id;
  const created = await acme.rest.post('/api/programs', { name: 'Deliveries', kind: 'campaign', flowId, audienceId, screeningResponse });
  expect(created.status).toBe(201);
  return created.body.id;
}

describe('what an outbound call’s agent answers a call screener with', () => {
  it('is the program’s screeningResponse, rendered for the call with its own variables, at the end of the instructions', async () => {
    const programId = await program('Hello, this is {{organization.name}} for {{contact.name}} about {{reason}}. We will hold.');
    const { instructions, conversationId } = await sessionInstructions({ programId, variables: { reason: 'the Friday delivery' } });
    const line = `Hello, this is Acme screening for ${contactName} about the Friday delivery. We will hold.`;
    expect(instructions).toContain(SCREENED);
    // Said word for word: the line quoted after the section, the agent's own instructions before it.
    expect(instructions.indexOf(JSON.stringify(line))).toBeGreaterThan(instructions.indexOf('You confirm deliveries'));
    // Stored with what the agent knew, on the conversation's context.
    const conversation = await acme.graphql.ok(ScreenedConversationDocument, { id: conversationId });
    expect(conversation.conversation.context?.screening).toBe(line);
    const rest = await acme.rest.get(`/api/conversations/${conversationId}`);
    expect(rest.status).toBe(200);
    expect(rest.body.context.screening).toBe(line);
    // The business policy is the model's, never the screener's line.
    expect(line).not.toContain('nine');
  });

  it('is the default without a program setting: who calls, from where, for whom, and the reason when the call has one', async () => {
    const bare = await sessionInstructions({ programId: await program(null) });
    expect(bare.instructions).toContain(JSON.stringify(`This is Ada from Acme screening, calling for ${contactName}.`));
    const single = await sessionInstructions({ variables: { reason: 'your parcel' } });
    expect(single.instructions).toContain(JSON.stringify(`This is Ada from Acme screening, calling for ${contactName}, about your parcel.`));
  });

  it('is no part of an inbound call: the caller called the business', async () => {
    const { instructions, conversationId } = await sessionInstructions({ programId: await program('Hello from Acme.'), direction: 'inbound' });
    expect(instructions).not.toContain(SCREENED);
    expect((await acme.graphql.ok(ScreenedConversationDocument, { id: conversationId })).conversation.context?.screening).toBeNull();
  });
});

describe('the screeningResponse setting on both doors', () => {
  let flowId: string;
  let audienceId: string;
  beforeAll(async () => {
    flowId = (await acme.rest.post('/api/call-flows', FLOW)).body.id;
    audienceId = (await createAudience(acme, 1)).id;
  });
  const base = () => ({ name: 'Screened', kind: 'campaign', flowId, audienceId });

  it.each<[string, unknown]>([
    ['an empty line', ''],
    ['a line over 500 characters', 'x'.repeat(501)],
    ['a template that does not parse', 'Hi {{#contact.name}}'],
    ['a partial', 'Hi {{> other}}'],
    ['a number', 42],
  ])('refuses %s with the same error on both doors', async (_, screeningResponse) => {
    const input = { ...base(), screeningResponse };
    const rest = await acme.rest.post('/api/programs', input);
    const graphql = await acme.graphql.run(CreateProgramDocument, { input: input as never });
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(rest.body.errors)).toEqual(['screeningResponse']);
    expect(fieldsOf(graphql.errors?.[0]?.extensions.errors)).toEqual(['screeningResponse']);
    // A value of the wrong type is refused by GraphQL's own coercion (its message); the rule's message is the same on both doors.
    if (typeof screeningResponse === 'string') expect(graphql.errors?.[0]?.extensions.errors).toEqual(rest.body.errors);
  });

  it('is stored, read on both doors, cleared by null; another organization gets 404', async () => {
    const created = await acme.rest.post('/api/programs', { ...base(), screeningResponse: 'This is {{organization.name}}.' });
    expect(created.status).toBe(201);
    expect(created.body.screeningResponse).toBe('This is {{organization.name}}.');
    expect((await acme.graphql.ok(ProgramScreeningDocument, { id: created.body.id })).program.screeningResponse).toBe('This is {{organization.name}}.');
    const changed = await acme.graphql.ok(UpdateProgramScreeningDocument, { id: created.body.id, input: { screeningResponse: 'Acme calling.' } });
    expect(changed.updateProgram.screeningResponse).toBe('Acme calling.');
    const cleared = await acme.rest.put(`/api/programs/${created.body.id}`, { screeningResponse: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.screeningResponse).toBeNull();

    expect((await other.rest.put(`/api/programs/${created.body.id}`, { screeningResponse: 'Hi' })).status).toBe(404);
    expect((await other.graphql.run(ProgramScreeningDocument, { id: created.body.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const theirs = await other.graphql.run(UpdateProgramScreeningDocument, { id: created.body.id, input: { screeningResponse: 'Hi' } });
    expect(theirs.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});
