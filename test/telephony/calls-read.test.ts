import { CallsDocument, CallWithRelationsDocument, ContactsWithCallsDocument, ExecutionCallsDocument, type CallsQueryVariables } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { campaignWithExecution, insertCall, type Campaign } from './call-seed.js';

const REST_FIELDS = [
  'id', 'organizationId', 'executionId', 'programId', 'contactId', 'agentId', 'conversationId', 'direction', 'from', 'to', 'status', 'outcome', 'answeredBy', 'attempt',
  'carrier', 'carrierConnectionId', 'carrierCallId', 'queuedAt', 'answeredAt', 'endedAt', 'durationSeconds', 'reachedNodeIds', 'errorText',
  'creditsCharged', 'createdAt', 'updatedAt',
];

const T0 = new Date('2026-11-20T09:00:00.000Z');
const at = (hours: number) => new Date(T0.getTime() + hours * 3_600_000);

let app: TestApp;
let a: TestOrganization;
let b: TestOrganization;
let campaign: Campaign;
/** Org A's calls, k1 oldest … k4 newest; kb is org B's call that names org A's records. */
const k: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  a = await app.organization('Calls A');
  b = await app.organization('Calls B');
  campaign = await campaignWithExecution(app, a, 3);
  const [c1, c2, c3] = campaign.contactIds as [string, string, string];
  const base = { organizationId: a.organizationId, executionId: campaign.executionId, programId: campaign.programId, agentId: campaign.agentId };
  k.k1 = await insertCall(app, { ...base, contactId: c1, executionContactId: campaign.queueRows.get(c1), attempt: 1, status: 'no_answer', outcome: 'no_answer', queuedAt: at(0), endedAt: at(0.01) });
  k.k2 = await insertCall(app, {
    ...base, contactId: c1, executionContactId: campaign.queueRows.get(c1), claimToken: 'claim-secret-token', attempt: 2, status: 'completed', outcome: 'answered',
    carrier: 'twilio', carrierCallId: 'CA0123456789abcdef', to: '+14155550111', queuedAt: at(1), answeredAt: at(1.001), endedAt: at(1.02), durationSeconds: 66,
    reachedNodeIds: ['start', 'confirm'], creditsCharged: 1,
  });
  k.k3 = await insertCall(app, { ...base, contactId: c2, executionContactId: campaign.queueRows.get(c2), status: 'failed', outcome: 'failed', errorText: 'carrier said "no"', queuedAt: at(2), endedAt: at(2.001), durationSeconds: 0 });
  k.k4 = await insertCall(app, { organizationId: a.organizationId, contactId: c3, direction: 'inbound', from: '+14155550777', to: '+14155550100', status: 'ringing', queuedAt: at(3) });
  k.kb = await insertCall(app, { ...base, organizationId: b.organizationId, contactId: c1, status: 'completed', queuedAt: at(1.5) });
}, 120_000);
afterAll(() => app?.close());

/** The REST query string of GraphQL variables. */
function query(variables: Record<string, unknown>): string {
  const params = new URLSearchParams(Object.entries(variables).map(([key, value]): [string, string] => [key, String(value)]));
  return params.size > 0 ? `?${params}` : '';
}

/** Both doors with the same arguments: the same page, or the same error code and fields. */
async function both(org: TestOrganization, variables: Record<string, unknown>) {
  const rest = await org.rest.get(`/api/calls${query(variables)}`);
  const graphql = await org.graphql.run(CallsDocument, variables as CallsQueryVariables);
  if (rest.status === 200) {
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data!.calls).toEqual(rest.body);
  }
  return { rest, graphql };
}

async function ids(org: TestOrganization, variables: Record<string, unknown>): Promise<string[]> {
  const { rest } = await both(org, variables);
  expect(rest.status).toBe(200);
  return rest.body.data.map((call: { id: string }) => call.id);
}

describe('GET /api/calls and calls(...)', () => {
  it('answers {data, meta} newest first with exactly the documented fields, the same on both doors', async () => {
    const { rest } = await both(a, {});
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((call: { id: string }) => call.id)).toEqual([k.k4, k.k3, k.k2, k.k1]);
    expect(rest.body.meta).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    for (const call of rest.body.data) expect(Object.keys(call)).toEqual(REST_FIELDS);
    const k2 = rest.body.data[2];
    expect(k2).toMatchObject({
      id: k.k2, organizationId: a.organizationId, executionId: campaign.executionId, programId: campaign.programId, contactId: campaign.contactIds[0],
      agentId: campaign.agentId, direction: 'outbound', from: '+14155550000', to: '+14155550111', status: 'completed', outcome: 'answered', attempt: 2,
      carrier: 'twilio', carrierConnectionId: null, carrierCallId: 'CA0123456789abcdef', queuedAt: at(1).toISOString(), answeredAt: at(1.001).toISOString(),
      endedAt: at(1.02).toISOString(), durationSeconds: 66, reachedNodeIds: ['start', 'confirm'], errorText: null, creditsCharged: 1,
    });
    expect(JSON.stringify(rest.body)).not.toContain('claim-secret-token');
    expect(JSON.stringify(rest.body)).not.toContain(campaign.queueRows.get(campaign.contactIds[0]!));
  });

  it('filters by execution, program, contact, status, direction and search', async () => {
    const [c1, c2, c3] = campaign.contactIds;
    expect(await ids(a, { executionId: campaign.executionId })).toEqual([k.k3, k.k2, k.k1]);
    expect(await ids(a, { programId: campaign.programId })).toEqual([k.k3, k.k2, k.k1]);
    expect(await ids(a, { contactId: c1 })).toEqual([k.k2, k.k1]);
    expect(await ids(a, { contactId: c2 })).toEqual([k.k3]);
    expect(await ids(a, { contactId: c3, direction: 'inbound' })).toEqual([k.k4]);
    expect(await ids(a, { direction: 'outbound' })).toEqual([k.k3, k.k2, k.k1]);
    expect(await ids(a, { status: 'completed' })).toEqual([k.k2]);
    expect(await ids(a, { status: 'completed', contactId: c2 })).toEqual([]);
    expect(await ids(a, { search: '0777' })).toEqual([k.k4]);
    expect(await ids(a, { search: '555 0111'.replace(' ', '') })).toEqual([k.k2]);
  });

  it('takes a queuedAt range: queuedAfter inclusive, queuedBefore exclusive', async () => {
    expect(await ids(a, { queuedAfter: at(1).toISOString() })).toEqual([k.k4, k.k3, k.k2]);
    expect(await ids(a, { queuedBefore: at(1).toISOString() })).toEqual([k.k1]);
    expect(await ids(a, { queuedAfter: at(1).toISOString(), queuedBefore: at(3).toISOString() })).toEqual([k.k3, k.k2]);
    expect(await ids(a, { queuedAfter: '2026-11-20T10:30:00+01:00', queuedBefore: at(2.5).toISOString() })).toEqual([k.k3, k.k2]);
  });

  it('pages and sorts like the other lists', async () => {
    const { rest } = await both(a, { page: 2, limit: 3 });
    expect(rest.body.data.map((call: { id: string }) => call.id)).toEqual([k.k1]);
    expect(rest.body.meta).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    expect(await ids(a, { sortBy: 'queuedAt', sortOrder: 'asc' })).toEqual([k.k1, k.k2, k.k3, k.k4]);
    // Calls without a duration come last, whichever the direction.
    const descending = await ids(a, { sortBy: 'durationSeconds', sortOrder: 'desc' });
    expect(descending.slice(0, 2)).toEqual([k.k2, k.k3]);
    expect(descending.slice(2).sort()).toEqual([k.k1, k.k4].sort());
    const ascending = await ids(a, { sortBy: 'durationSeconds', sortOrder: 'asc' });
    expect(ascending.slice(0, 2)).toEqual([k.k3, k.k2]);
    expect(ascending.slice(2).sort()).toEqual([k.k1, k.k4].sort());
  });

  it.each([
    ['a status that does not exist', { status: 'answered' }, 'status'],
    ['a direction that does not exist', { direction: 'sideways' }, 'direction'],
    ['an executionId that is not a UUID', { executionId: 'not-a-uuid' }, 'executionId'],
    ['a contactId that is not a UUID', { contactId: '42' }, 'contactId'],
    ['a date that is not ISO 8601', { queuedAfter: 'yesterday' }, 'queuedAfter'],
    ['a range that ends before it starts', { queuedAfter: at(2).toISOString(), queuedBefore: at(1).toISOString() }, 'queuedBefore'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['page 0', { page: 0 }, 'page'],
    ['a sortBy off the allow-list', { sortBy: 'to' }, 'sortBy'],
  ])('%s: 400 BAD_USER_INPUT on both doors', async (_label, variables, field) => {
    const { rest, graphql } = await both(a, variables);
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
    expect(JSON.stringify(rest.body)).toContain(field);
    expect(JSON.stringify(graphql.errors)).toContain(field);
  });

  it('scopes every filter to the caller: another organization’s ids match nothing, and its own rows that name them are its own', async () => {
    expect(await ids(b, {})).toEqual([k.kb]);
    expect(await ids(b, { contactId: campaign.contactIds[1] })).toEqual([]);
    expect(await ids(b, { executionId: campaign.executionId, status: 'no_answer' })).toEqual([]);
    expect(await ids(a, { status: 'completed', queuedAfter: at(1.4).toISOString(), queuedBefore: at(1.6).toISOString() })).toEqual([]);
  });
});

describe('GET /api/calls/{id} and call(id)', () => {
  it('answers the call, the same on both doors, with its relations on GraphQL', async () => {
    const rest = await a.rest.get(`/api/calls/${k.k2}`);
    expect(rest.status).toBe(200);
    expect(Object.keys(rest.body)).toEqual(REST_FIELDS);
    const list = await a.rest.get(`/api/calls?contactId=${campaign.contactIds[0]}`);
    expect(rest.body).toEqual(list.body.data[0]);
    const { call } = await a.graphql.ok(CallWithRelationsDocument, { id: k.k2 });
    const { execution, contact, program, agent, ...fields } = call;
    expect(fields).toEqual(rest.body);
    expect([execution?.id, contact?.id, program?.id, agent?.id]).toEqual([campaign.executionId, campaign.contactIds[0], campaign.programId, campaign.agentId]);
    const inbound = await a.graphql.ok(CallWithRelationsDocument, { id: k.k4 });
    expect([inbound.call.execution, inbound.call.program, inbound.call.agent, inbound.call.contact?.id]).toEqual([null, null, null, campaign.contactIds[2]]);
  });

  it('another organization’s call, an unknown id and a malformed id are 404 on both doors', async () => {
    for (const id of [k.k2, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const rest = await b.rest.get(`/api/calls/${id}`);
      expect([rest.status, rest.body.code]).toEqual([404, 'NOT_FOUND']);
      const graphql = await b.graphql.run(CallWithRelationsDocument, { id });
      expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['NOT_FOUND']);
    }
  });

  it('a call naming another organization’s records shows none of them', async () => {
    const { call } = await b.graphql.ok(CallWithRelationsDocument, { id: k.kb });
    expect(call.contactId).toBe(campaign.contactIds[0]);
    expect([call.execution, call.contact, call.program, call.agent]).toEqual([null, null, null, null]);
  });
});

describe('Execution.calls and Contact.calls', () => {
  it('page the calls of an execution, newest first, with a status filter', async () => {
    const first = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, limit: 2 });
    expect(first.execution.calls.data.map((call) => call.id)).toEqual([k.k3, k.k2]);
    expect(first.execution.calls.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const second = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, limit: 2, page: 2 });
    expect(second.execution.calls.data.map((call) => call.id)).toEqual([k.k1]);
    const failed = await a.graphql.ok(ExecutionCallsDocument, { id: campaign.executionId, status: 'failed' });
    expect(failed.execution.calls.data.map((call) => call.id)).toEqual([k.k3]);
    // Org B's call names the execution, but is not org A's.
    expect(first.execution.calls.data.map((call) => call.id)).not.toContain(k.kb);
  });

  it('page the calls of each contact, only the organization’s own', async () => {
    const { contacts } = await a.graphql.ok(ContactsWithCallsDocument, { limit: 10, callLimit: 5 });
    const byContact = Object.fromEntries(contacts.data.map((contact) => [contact.id, contact.calls]));
    const [c1, c2, c3] = campaign.contactIds as [string, string, string];
    expect(byContact[c1]!.data.map((call) => call.id)).toEqual([k.k2, k.k1]);
    expect(byContact[c1]!.meta.total).toBe(2);
    expect(byContact[c2]!.data.map((call) => call.id)).toEqual([k.k3]);
    expect(byContact[c3]!.data).toEqual([{ id: k.k4, contactId: c3, execution: null, contact: { id: c3 } }]);
    expect(byContact[c1]!.data[0]).toEqual({ id: k.k2, contactId: c1, execution: { id: campaign.executionId }, contact: { id: c1 } });
  });

  it('batch: contacts with their calls, executions and contacts cost the same statements for 2 and 12 contacts', async () => {
    async function statementsFor(contacts: number): Promise<number> {
      const org = await app.organization(`Batch ${contacts}`);
      const seeded = await campaignWithExecution(app, org, contacts);
      for (const contactId of seeded.contactIds) {
        for (const attempt of [1, 2]) {
          await insertCall(app, { organizationId: org.organizationId, executionId: seeded.executionId, contactId, attempt, queuedAt: at(attempt) });
        }
      }
      let answered = 0;
      const statements = await recordStatements(app, async () => {
        const { contacts: page } = await org.graphql.ok(ContactsWithCallsDocument, { limit: 20, callLimit: 5 });
        for (const contact of page.data) {
          expect(contact.calls.data).toHaveLength(2);
          for (const call of contact.calls.data) expect([call.execution?.id, call.contact?.id]).toEqual([seeded.executionId, contact.id]);
          answered += 1;
        }
      });
      expect(answered).toBe(contacts);
      return statements.length;
    }
    const two = await statementsFor(2);
    const twelve = await statementsFor(12);
    expect(two).toBeGreaterThan(0);
    expect(twelve).toBe(two);
  }, 120_000);

  it('count in the GraphQL cost: nested call lists multiply by their limits', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
      body: JSON.stringify({ query: '{ calls(limit: 100) { data { id execution { calls(limit: 100) { data { id } } } } } }' }),
    });
    const body = (await res.json()) as { errors?: { message: string; extensions: { code: string } }[] };
    expect(body.errors?.map((error) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
    expect(body.errors?.[0]?.message).toMatch(/would cost \d+/);
    const small = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
      body: JSON.stringify({ query: '{ calls(limit: 5) { data { id execution { calls(limit: 5) { data { id } } } } } }' }),
    });
    expect(((await small.json()) as { errors?: unknown }).errors).toBeUndefined();
  });
});
