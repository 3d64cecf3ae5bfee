import type { TestApp, TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import type { FakeTwilio } from '../support/fake-twilio.js';

export const POLICY = 'Never offer refunds to anyone. Internal code is BLUE FALCON.';

/** An active agent through the REST door: builtin/echo unless told, batch voice with a Twilio voice (`draft: true` leaves it a draft). */
export async function createVoiceAgent(org: TestOrganization, overrides: Record<string, unknown> = {}, options: { draft?: boolean } = {}): Promise<string> {
  const res = await org.rest.post('/api/agents', {
    name: 'Ava',
    instructions: 'You help callers with their appointments.',
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'batch', voiceId: 'Polly.Matthew' },
    ...overrides,
  });
  expect(res.status).toBe(201);
  if (!options.draft) expect((await org.rest.post(`/api/agents/${res.body.id}/activate`)).status).toBe(200);
  return res.body.id as string;
}

/** The Twilio connection of the organization (made once) and a new caller-ID number on it. */
export async function twilioNumber(org: TestOrganization, fake: FakeTwilio): Promise<{ connectionId: string; numberId: string; number: string }> {
  let connectionId: string | undefined = (await org.rest.get('/api/carrier-connections')).body.data?.[0]?.id;
  if (!connectionId) {
    const connection = await org.rest.post('/api/carrier-connections', { name: 'Twilio', accountSid: fake.accountSid, authToken: fake.authToken });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id as string;
  }
  const number = `+1415${String(Math.floor(Math.random() * 9_000_000) + 1_000_000)}`;
  const created = await org.rest.post('/api/phone-numbers', { number, carrierConnectionId: connectionId });
  expect(created.status).toBe(201);
  return { connectionId: connectionId!, numberId: created.body.id, number };
}

export interface VoiceCampaign {
  connectionId: string;
  programId: string;
  executionId: string;
  phones: string[];
}

/** A started Twilio campaign over `contacts` new contacts, speaking `flow` (or a single agent). */
export async function voiceCampaign(
  org: TestOrganization,
  fake: FakeTwilio,
  options: { flow?: Record<string, unknown>; agentId?: string; contacts?: number; maxAttempts?: number },
): Promise<VoiceCampaign> {
  const { connectionId, numberId } = await twilioNumber(org, fake);
  const audience = await createAudience(org, options.contacts ?? 1);
  let flowId: string | undefined;
  if (options.flow) {
    const flow = await org.rest.post('/api/call-flows', options.flow);
    expect(flow.status).toBe(201);
    flowId = flow.body.id;
  }
  const program = await org.rest.post('/api/programs', {
    name: 'Voice',
    kind: 'campaign',
    ...(flowId ? { flowId } : { agentId: options.agentId }),
    audienceId: audience.id,
    carrier: 'twilio',
    fromNumberId: numberId,
    maxConcurrentCalls: 5,
    retryPolicy: { maxAttempts: options.maxAttempts ?? 1, retryDelayMinutes: 0 },
  });
  expect(program.status).toBe(201);
  expect((await org.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await org.grantCredits(50);
  const execution = await org.rest.post(`/api/programs/${program.body.id}/executions`);
  expect(execution.status).toBe(201);
  expect((await org.rest.post(`/api/executions/${execution.body.id}/start`)).status).toBe(200);
  const contacts = await org.rest.get('/api/contacts?limit=100');
  const phones = contacts.body.data
    .filter((contact: { id: string }) => audience.contactIds.includes(contact.id))
    .map((contact: { phone: string }) => contact.phone);
  return { connectionId, programId: program.body.id, executionId: execution.body.id, phones };
}

export interface StoredCall {
  id: string;
  status: string;
  outcome: string | null;
  reached_node_ids: string[];
  conversation_id: string | null;
  error_text: string | null;
  attempt: number;
  direction: string;
  to_number: string;
  from_number: string | null;
}

export const callsOf = (app: TestApp, executionId: string) =>
  app.sql<StoredCall>(
    `select id, status, outcome, reached_node_ids, conversation_id, error_text, attempt, direction, to_number, from_number from calls where execution_id = ? order by queued_at`,
    [executionId],
  );

export const messagesOf = (app: TestApp, conversationId: string) =>
  app.sql<{ role: string; content: string; usage: { totalTokens: number } | null }>(
    'select role, content, usage from messages where conversation_id = ? order by sequence',
    [conversationId],
  );

/** The conversation once it is closed: the call's end closes it just after the carrier's last report is answered. */
export async function closedConversation(org: TestOrganization, conversationId: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const conversation = (await org.rest.get(`/api/conversations/${conversationId}`)).body;
    if (conversation.status !== 'active' && conversation.status !== 'pending') return conversation;
    if (Date.now() > until) throw new Error(`conversation not closed in time: ${JSON.stringify(conversation)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
