import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  ActivateAgentDocument,
  ActivateProgramDocument,
  AddAudienceMembersDocument,
  AddDocumentDocument,
  AddTeamMemberDocument,
  AddUserDocument,
  ControlExecutionDocument,
  CreateAgentDocument,
  CreateAudienceDocument,
  CreateBusinessEntityDocument,
  CreateCallFlowDocument,
  CreateContactDocument,
  CreateKnowledgeBaseDocument,
  CreateProgramDocument,
  CreateTeamDocument,
  DeleteAgentDocument,
  DeleteAudienceDocument,
  DeleteBusinessEntityDocument,
  DeleteCallFlowDocument,
  DeleteContactDocument,
  DeleteKnowledgeBaseDocument,
  DeleteProgramDocument,
  DeleteTeamDocument,
  ImportContactsDocument,
  RemoveAudienceMembersDocument,
  RemoveTeamMemberDocument,
  RemoveUserDocument,
  SendMessageDocument,
  StartConversationDocument,
  CreateExecutionDocument,
  SyncProgramTriggersDocument,
  TestAgentDocument,
  UpdateAgentDocument,
  UpdateAudienceDocument,
  UpdateBusinessEntityDocument,
  UpdateCallFlowDocument,
  UpdateContactDocument,
  UpdateOrganizationDocument,
  UpdateProgramDocument,
  UpdateTeamDocument,
  UpdateUserRoleDocument,
  CreateCarrierConnectionDocument,
  UpdateCarrierConnectionDocument,
  DeleteCarrierConnectionDocument,
  CreatePhoneNumberDocument,
  UpdatePhoneNumberDocument,
  DeletePhoneNumberDocument,
  CreateWebhookEndpointDocument,
  UpdateWebhookEndpointDocument,
  DeleteWebhookEndpointDocument,
  RotateWebhookEndpointSecretDocument,
  CreateWebhookDeliveryDocument,
  TestWebhookEndpointDocument,
} from '../generated/graphql.js';
import { ALL_DAY, buildCampaign } from '../campaigns/fixtures.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, type TestUser } from '../helpers/users.js';
import { PERMISSIONS } from '../../src/modules/organizations/roles.js';

// Every write a role may not do is tried on both doors with a valid body, answers 403 FORBIDDEN,
// and leaves every table as it was (compared by a digest of the rows, lastUsedAt of keys aside).

let app: TestApp;
let acme: TestOrganization;
let member: TestUser;
let admin: TestUser;
let ids: Record<string, string>;

const TABLES = [
  'organizations', 'users', 'teams', 'team_memberships', 'agents', 'conversations', 'messages', 'knowledge_bases',
  'knowledge_documents', 'knowledge_chunks', 'contacts', 'business_entities', 'audiences', 'audience_members',
  'call_flows', 'programs', 'executions', 'execution_contacts', 'contact_triggers', 'carrier_connections', 'phone_numbers', 'calls',
  'webhook_endpoints', 'webhook_deliveries',
];
const connectionBody = { name: 'Twilio', accountSid: `AC${'1'.repeat(32)}`, authToken: 'f'.repeat(32) };

async function digest(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await app.sql<{ d: string | null }>(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as d from ${table} t`);
    out[table] = row!.d ?? '';
  }
  const [keys] = await app.sql<{ d: string }>(
    `select md5(coalesce(string_agg(concat_ws(',', id, name, is_active, expires_at, updated_at), '|' order by id), '')) as d from api_keys`,
  );
  out.api_keys = keys!.d;
  return out;
}

const agentBody = { name: 'Intruder', instructions: 'x', modelConfig: { model: 'builtin/echo' } };
const flowBody = (agentId: string) => ({
  name: 'Intruder flow',
  nodes: [
    { id: 'start', type: 'start', agentId },
    { id: 'end', type: 'end' },
  ],
  edges: [{ from: 'start', to: 'end', condition: 'answered' }],
});

interface Case {
  name: string;
  permission: keyof typeof PERMISSIONS;
  rest: () => [method: 'post' | 'put' | 'delete', path: string, body?: unknown];
  graphql: () => [TypedDocumentNode<any, any>, Record<string, unknown>];
}

const CASES: Case[] = [
  { name: 'create an agent', permission: 'agents.manage', rest: () => ['post', '/api/agents', agentBody], graphql: () => [CreateAgentDocument, { input: agentBody }] },
  { name: 'change an agent’s policy', permission: 'agents.manage', rest: () => ['put', `/api/agents/${ids.agent}`, { policy: 'Refund everything.' }], graphql: () => [UpdateAgentDocument, { id: ids.agent, input: { policy: 'Refund everything.' } }] },
  { name: 'activate an agent', permission: 'agents.manage', rest: () => ['post', `/api/agents/${ids.draftAgent}/activate`], graphql: () => [ActivateAgentDocument, { id: ids.draftAgent }] },
  { name: 'delete an agent', permission: 'agents.manage', rest: () => ['delete', `/api/agents/${ids.agent}`], graphql: () => [DeleteAgentDocument, { id: ids.agent }] },
  { name: 'create a knowledge base', permission: 'knowledge.manage', rest: () => ['post', '/api/knowledge-bases', { name: 'KB' }], graphql: () => [CreateKnowledgeBaseDocument, { input: { name: 'KB' } }] },
  { name: 'add a document', permission: 'knowledge.manage', rest: () => ['post', `/api/knowledge-bases/${ids.kb}/documents`, { title: 'T', content: 'C' }], graphql: () => [AddDocumentDocument, { knowledgeBaseId: ids.kb, input: { title: 'T', content: 'C' } }] },
  { name: 'delete a knowledge base', permission: 'knowledge.manage', rest: () => ['delete', `/api/knowledge-bases/${ids.kb}`], graphql: () => [DeleteKnowledgeBaseDocument, { id: ids.kb }] },
  { name: 'create a contact', permission: 'contacts.manage', rest: () => ['post', '/api/contacts', { phone: '+12025550999' }], graphql: () => [CreateContactDocument, { input: { phone: '+12025550999' } }] },
  { name: 'change a contact', permission: 'contacts.manage', rest: () => ['put', `/api/contacts/${ids.contact}`, { name: 'X' }], graphql: () => [UpdateContactDocument, { id: ids.contact, input: { name: 'X' } }] },
  { name: 'delete a contact', permission: 'contacts.manage', rest: () => ['delete', `/api/contacts/${ids.contact}`], graphql: () => [DeleteContactDocument, { id: ids.contact }] },
  { name: 'import contacts', permission: 'contacts.manage', rest: () => ['post', '/api/contacts/import', { contacts: [{ phone: '+12025550998' }] }], graphql: () => [ImportContactsDocument, { input: { contacts: [{ phone: '+12025550998' }] } }] },
  { name: 'create a business record', permission: 'contacts.manage', rest: () => ['post', '/api/business-entities', { contactId: ids.contact, type: 'order', name: 'O' }], graphql: () => [CreateBusinessEntityDocument, { input: { contactId: ids.contact, type: 'order', name: 'O' } }] },
  { name: 'change a business record', permission: 'contacts.manage', rest: () => ['put', `/api/business-entities/${ids.entity}`, { name: 'P' }], graphql: () => [UpdateBusinessEntityDocument, { id: ids.entity, input: { name: 'P' } }] },
  { name: 'delete a business record', permission: 'contacts.manage', rest: () => ['delete', `/api/business-entities/${ids.entity}`], graphql: () => [DeleteBusinessEntityDocument, { id: ids.entity }] },
  { name: 'create an audience', permission: 'audiences.manage', rest: () => ['post', '/api/audience', { name: 'A' }], graphql: () => [CreateAudienceDocument, { input: { name: 'A' } }] },
  { name: 'change an audience', permission: 'audiences.manage', rest: () => ['put', `/api/audience/${ids.audience}`, { name: 'B' }], graphql: () => [UpdateAudienceDocument, { id: ids.audience, input: { name: 'B' } }] },
  { name: 'delete an audience', permission: 'audiences.manage', rest: () => ['delete', `/api/audience/${ids.audience}`], graphql: () => [DeleteAudienceDocument, { id: ids.audience }] },
  { name: 'add audience members', permission: 'audiences.manage', rest: () => ['post', `/api/audience/${ids.audience}/members`, { contactIds: [ids.loneContact] }], graphql: () => [AddAudienceMembersDocument, { audienceId: ids.audience, contactIds: [ids.loneContact] }] },
  { name: 'remove audience members', permission: 'audiences.manage', rest: () => ['delete', `/api/audience/${ids.audience}/members`, { contactIds: [ids.contact] }], graphql: () => [RemoveAudienceMembersDocument, { audienceId: ids.audience, contactIds: [ids.contact] }] },
  { name: 'create a call flow', permission: 'flows.manage', rest: () => ['post', '/api/call-flows', flowBody(ids.agent!)], graphql: () => [CreateCallFlowDocument, { input: flowBody(ids.agent!) }] },
  { name: 'change a call flow', permission: 'flows.manage', rest: () => ['put', `/api/call-flows/${ids.flow}`, { name: 'Renamed' }], graphql: () => [UpdateCallFlowDocument, { id: ids.flow, input: { name: 'Renamed' } }] },
  { name: 'delete a call flow', permission: 'flows.manage', rest: () => ['delete', `/api/call-flows/${ids.flow}`], graphql: () => [DeleteCallFlowDocument, { id: ids.flow }] },
  { name: 'create a program', permission: 'programs.manage', rest: () => ['post', '/api/programs', { name: 'P', kind: 'campaign', audienceId: ids.audience, callingWindow: ALL_DAY }], graphql: () => [CreateProgramDocument, { input: { name: 'P', kind: 'campaign', audienceId: ids.audience, callingWindow: ALL_DAY } }] },
  { name: 'change a program', permission: 'programs.manage', rest: () => ['put', `/api/programs/${ids.program}`, { name: 'Q' }], graphql: () => [UpdateProgramDocument, { id: ids.program, input: { name: 'Q' } }] },
  { name: 'activate a program', permission: 'programs.manage', rest: () => ['post', `/api/programs/${ids.draftProgram}/activate`], graphql: () => [ActivateProgramDocument, { id: ids.draftProgram }] },
  { name: 'delete a program', permission: 'programs.manage', rest: () => ['delete', `/api/programs/${ids.program}`], graphql: () => [DeleteProgramDocument, { id: ids.program }] },
  { name: 'sync a program’s triggers', permission: 'programs.manage', rest: () => ['post', `/api/programs/${ids.program}/triggers/sync`], graphql: () => [SyncProgramTriggersDocument, { programId: ids.program }] },
  { name: 'start an execution (spends credits)', permission: 'executions.control', rest: () => ['post', `/api/programs/${ids.program}/executions`, {}], graphql: () => [CreateExecutionDocument, { programId: ids.program }] },
  { name: 'cancel an execution', permission: 'executions.control', rest: () => ['post', `/api/executions/${ids.execution}/cancel`], graphql: () => [ControlExecutionDocument, { id: ids.execution, action: 'cancel' as const }] },
  { name: 'connect a carrier', permission: 'telephony.manage', rest: () => ['post', '/api/carrier-connections', connectionBody], graphql: () => [CreateCarrierConnectionDocument, { input: connectionBody }] },
  { name: 'change a carrier connection', permission: 'telephony.manage', rest: () => ['put', `/api/carrier-connections/${ids.connection}`, { callsPerSecond: 50 }], graphql: () => [UpdateCarrierConnectionDocument, { id: ids.connection, input: { callsPerSecond: 50 } }] },
  { name: 'delete a carrier connection', permission: 'telephony.manage', rest: () => ['delete', `/api/carrier-connections/${ids.connection}`], graphql: () => [DeleteCarrierConnectionDocument, { id: ids.connection }] },
  { name: 'add a phone number', permission: 'telephony.manage', rest: () => ['post', '/api/phone-numbers', { number: '+14155550111' }], graphql: () => [CreatePhoneNumberDocument, { input: { number: '+14155550111' } }] },
  { name: 'change a phone number', permission: 'telephony.manage', rest: () => ['put', `/api/phone-numbers/${ids.number}`, { label: 'Mine now' }], graphql: () => [UpdatePhoneNumberDocument, { id: ids.number, input: { label: 'Mine now' } }] },
  { name: 'delete a phone number', permission: 'telephony.manage', rest: () => ['delete', `/api/phone-numbers/${ids.number}`], graphql: () => [DeletePhoneNumberDocument, { id: ids.number }] },
  { name: 'add a webhook endpoint', permission: 'webhooks.manage', rest: () => ['post', '/api/webhook-endpoints', { url: 'https://93.184.215.14/hooks' }], graphql: () => [CreateWebhookEndpointDocument, { input: { url: 'https://93.184.215.14/hooks' } }] },
  { name: 'change a webhook endpoint', permission: 'webhooks.manage', rest: () => ['put', `/api/webhook-endpoints/${ids.endpoint}`, { url: 'https://93.184.215.15/mine' }], graphql: () => [UpdateWebhookEndpointDocument, { id: ids.endpoint!, input: { url: 'https://93.184.215.15/mine' } }] },
  { name: 'delete a webhook endpoint', permission: 'webhooks.manage', rest: () => ['delete', `/api/webhook-endpoints/${ids.endpoint}`], graphql: () => [DeleteWebhookEndpointDocument, { id: ids.endpoint! }] },
  { name: 'rotate a webhook secret', permission: 'webhooks.manage', rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/rotate-secret`], graphql: () => [RotateWebhookEndpointSecretDocument, { id: ids.endpoint! }] },
  { name: 're-send an event to a webhook endpoint', permission: 'webhooks.manage', rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/deliveries`, { eventId: ids.event }], graphql: () => [CreateWebhookDeliveryDocument, { endpointId: ids.endpoint!, input: { eventId: ids.event! } }] },
  { name: 'send a webhook test event', permission: 'webhooks.manage', rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/test`], graphql: () => [TestWebhookEndpointDocument, { id: ids.endpoint! }] },
  { name: 'create a team', permission: 'teams.manage', rest: () => ['post', '/api/teams', { name: 'T2' }], graphql: () => [CreateTeamDocument, { input: { name: 'T2' } }] },
  { name: 'rename a team', permission: 'teams.manage', rest: () => ['put', `/api/teams/${ids.team}`, { name: 'T3' }], graphql: () => [UpdateTeamDocument, { id: ids.team, input: { name: 'T3' } }] },
  { name: 'delete a team', permission: 'teams.manage', rest: () => ['delete', `/api/teams/${ids.team}`], graphql: () => [DeleteTeamDocument, { id: ids.team }] },
  { name: 'add a team member', permission: 'teams.manage', rest: () => ['post', `/api/teams/${ids.team}/members`, { userId: ids.member }], graphql: () => [AddTeamMemberDocument, { teamId: ids.team, userId: ids.member }] },
  { name: 'remove a team member', permission: 'teams.manage', rest: () => ['delete', `/api/teams/${ids.team}/members/${ids.owner}`], graphql: () => [RemoveTeamMemberDocument, { teamId: ids.team, userId: ids.owner }] },
  { name: 'rename the organization', permission: 'organization.manage', rest: () => ['put', '/api/organization', { name: 'Hijacked' }], graphql: () => [UpdateOrganizationDocument, { input: { name: 'Hijacked' } }] },
  { name: 'add a user', permission: 'users.manage', rest: () => ['post', '/api/users', { email: 'mallory@example.test', role: 'owner' }], graphql: () => [AddUserDocument, { input: { email: 'mallory@example.test', role: 'owner' as const } }] },
  { name: 'change a user’s role', permission: 'users.manage', rest: () => ['put', `/api/users/${ids.member}`, { role: 'owner' }], graphql: () => [UpdateUserRoleDocument, { id: ids.member, role: 'owner' as const }] },
  { name: 'remove a user', permission: 'users.manage', rest: () => ['delete', `/api/users/${ids.owner}`], graphql: () => [RemoveUserDocument, { id: ids.owner }] },
];

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  member = await addUser(app, acme, 'member');
  admin = await addUser(app, acme, 'admin');
  const campaign = await buildCampaign(acme, 2);
  const post = async (path: string, body?: unknown) => {
    const res = await acme.rest.post(path, body);
    expect(res.status).toBeLessThan(300);
    return res.body.id as string;
  };
  const kb = await post('/api/knowledge-bases', { name: 'Help' });
  await post(`/api/knowledge-bases/${kb}/documents`, { title: 'Hours', content: 'We open at nine.' });
  const agent = await post('/api/agents', { ...agentBody, name: 'Front desk', policy: 'Never promise refunds.' });
  expect((await acme.rest.post(`/api/agents/${agent}/activate`)).status).toBe(200);
  const draftProgram = await post('/api/programs', { name: 'Draft', kind: 'campaign', flowId: campaign.flowId, audienceId: campaign.audienceId, callingWindow: ALL_DAY });
  const team = await post('/api/teams', { name: 'Ops' });
  // A connection as it is stored (made through the door it is first checked with the carrier).
  const connection = '7b0c4a8e-2f65-4f1d-9a7e-5d3c2b1a0f9e';
  await app.sql(
    `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
     values (?, now(), now(), ?, 'Twilio', 'twilio', ?, 'v1:AAAA:AAAA:AAAA', 'ffff', 1)`,
    [connection, acme.organizationId, `AC${'2'.repeat(32)}`],
  );
  expect((await acme.rest.post(`/api/teams/${team}/members`, { userId: acme.userId })).status).toBe(200);
  // An endpoint as it is stored (the door needs CREDENTIALS_KEY to seal its secret).
  const endpoint = '3f1e2d4c-5b6a-4798-8a9b-0c1d2e3f4a5b';
  await app.sql(
    `insert into webhook_endpoints (id, created_at, updated_at, organization_id, url, event_types, enabled, secret_encrypted, secret_hint)
     values (?, now(), now(), ?, 'https://93.184.215.14/hooks', '[]'::jsonb, true, 'v1:AAAA:AAAA:AAAA', 'abcd')`,
    [endpoint, acme.organizationId],
  );
  const [event] = (await acme.rest.get('/api/events?limit=1')).body.data;
  ids = {
    endpoint,
    event: event.id,
    owner: acme.userId,
    member: member.userId,
    agent,
    draftAgent: await post('/api/agents', { ...agentBody, name: 'Draft' }),
    kb,
    contact: campaign.contacts[0]!.id,
    loneContact: await post('/api/contacts', { phone: '+12025550997' }),
    entity: await post('/api/business-entities', { contactId: campaign.contacts[0]!.id, type: 'order', name: 'Order 1' }),
    audience: campaign.audienceId,
    flow: campaign.flowId,
    program: campaign.programId,
    draftProgram,
    execution: await post(`/api/programs/${campaign.programId}/executions`, {}),
    team,
    connection,
    number: await post('/api/phone-numbers', { number: '+14155550110', carrierConnectionId: connection }),
  };
});
afterAll(() => app.close());

describe.each([
  ['member', () => member],
  ['admin', () => admin],
] as const)('as an %s', (role, caller) => {
  const forbidden = CASES.filter((item) => !(PERMISSIONS[item.permission].roles as readonly string[]).includes(role));

  it.each(forbidden.map((item) => [item.name, item] as const))('%s → 403 FORBIDDEN on both doors, and nothing changes', async (_name, item) => {
    const before = await digest();
    const [method, path, body] = item.rest();
    const rest = await caller().rest.request(method.toUpperCase(), path, body);
    expect([rest.status, rest.body.code]).toEqual([403, 'FORBIDDEN']);
    const [document, variables] = item.graphql();
    const gql = await caller().graphql.run(document, variables);
    expect(gql.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(gql.errors).toHaveLength(1);
    expect(await digest()).toEqual(before);
  });
});

describe('what a member may do', () => {
  it('reads everything and talks to agents on both doors', async () => {
    for (const path of ['/api/agents', '/api/contacts', '/api/audience', '/api/programs', '/api/call-flows', '/api/knowledge-bases', '/api/teams', '/api/users', '/api/organization', '/api/carrier-connections', '/api/phone-numbers', '/api/calls', '/api/webhook-endpoints', `/api/webhook-endpoints/${ids.endpoint}/deliveries`]) {
      expect([path, (await member.rest.get(path)).status]).toEqual([path, 200]);
    }
    expect((await member.rest.post(`/api/agents/${ids.agent}/test`, { message: 'hi' })).body.response).toBe('Echo: hi');
    expect((await member.graphql.ok(TestAgentDocument, { id: ids.agent!, message: 'hey' })).testAgent.response).toBe('Echo: hey');
    const conversation = await member.rest.post(`/api/agents/${ids.agent}/conversations`);
    expect(conversation.status).toBe(201);
    expect((await member.rest.post(`/api/conversations/${conversation.body.id}/messages`, { message: 'one' })).status).toBe(200);
    const { startConversation } = await member.graphql.ok(StartConversationDocument, { agentId: ids.agent! });
    expect((await member.graphql.ok(SendMessageDocument, { conversationId: startConversation.id, message: 'two' })).sendMessage.response).toBe('Echo: two');
  });

  it('an admin manages agents (policy included) on both doors', async () => {
    expect((await admin.rest.put(`/api/agents/${ids.draftAgent}`, { policy: 'Be kind.' })).body.hasPolicy).toBe(true);
    expect((await admin.graphql.ok(UpdateAgentDocument, { id: ids.draftAgent!, input: { name: 'Renamed' } })).updateAgent.name).toBe('Renamed');
  });

  it('a demoted user’s key and token lose the rights at once', async () => {
    const user = await addUser(app, acme, 'admin');
    const token = (await user.rest.post('/api/auth/token')).body.accessToken as string;
    const bearer = app.rest({ authorization: `Bearer ${token}` });
    expect((await bearer.post('/api/audience', { name: 'By admin' })).status).toBe(201);
    expect((await acme.rest.put(`/api/users/${user.userId}`, { role: 'member' })).status).toBe(200);
    expect((await bearer.post('/api/audience', { name: 'By member' })).status).toBe(403);
    expect((await user.rest.post('/api/audience', { name: 'By member' })).status).toBe(403);
  });
});
