import { randomBytes, randomUUID } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { activeCampaign } from '../programs/fixtures.js';
import { createAudience, createContact, insertProgram, syncProgram } from '../triggers/fixtures.js';

// The lists with one fixed order (a program's executions and triggers, API keys, a conversation's
// messages and tool calls, an endpoint's deliveries, a base's documents, the credit ledger) page by
// cursor on both doors: walked to the end they give every row once, in the list's order, while rows
// are inserted between pages; a bad cursor is the same 400 ↔ BAD_USER_INPUT naming `cursor`; another
// organization's cursor never shows a row of theirs.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

const LIMIT = 3;

type Shape = 'data' | 'array' | 'apiKeys';

interface ListCase {
  name: string;
  shape: Shape;
  table: string;
  /** The REST path of the list (after seeding). */
  path(): string;
  /** A GraphQL query of one page, `page` aliasing the `{data, meta}` answer; `$cursor: String` its cursor. */
  graphql(): {
    query: string;
    variables: Record<string, unknown>;
    page(data: Record<string, any>): { data: { id: string }[]; meta: { nextCursor: string | null } };
  };
  /** The list's ids in its order, from the table. */
  order(): Promise<string[]>;
  /** Rows enough for three pages, ties of the sort value included. */
  seed(): Promise<void>;
  /** One more row, first in the list's order ('head') or last ('tail'): its id. */
  insert(where: 'head' | 'tail'): Promise<string>;
}

/** Copies the row `id` of `table` with these column values (an id of its own always): its id. */
async function clone(table: string, id: string, values: Record<string, unknown>): Promise<string> {
  const copy = randomUUID();
  await app.sql(`insert into ${table} select r.* from ${table} x, lateral jsonb_populate_record(null::${table}, to_jsonb(x) || ?::jsonb) r where x.id = ?`, [
    JSON.stringify({ ...values, id: copy }),
    id,
  ]);
  return copy;
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
/** Six instants in pairs (three sort values, each held by two rows), older than anything the test makes now. */
const PAIRS = [0, 0, 1, 1, 2, 2].map((minutes) => new Date(Date.UTC(2026, 5, 1) - minutes * 60_000).toISOString());
/** Each row inserted at the end goes after the one before it (a tie would put it before, or after, by its id). */
let tails = 0;
const nextTail = () => ++tails;
/** Rows inserted first are later each time (newest first): a tie with an earlier one would put it after the cursor, by its id. */
const headDate = () => new Date(Date.UTC(2999, 0, 1) + nextTail() * 60_000).toISOString();

async function orderedIds(sql: string, params: unknown[]): Promise<string[]> {
  return (await app.sql<{ id: string }>(sql, params)).map((row) => row.id);
}

const state: Record<string, string> = {};

/** A list ordered newest first by created_at, cloned from one row made through the door. */
function newestFirst(
  name: string,
  table: string,
  scope: { column: string; value: () => string },
  shape: Shape,
  path: () => string,
  graphql: ListCase['graphql'],
  first: () => Promise<string>,
  extra: (i: number) => Record<string, unknown> = () => ({}),
): ListCase {
  let origin = '';
  let made = 0;
  return {
    name,
    shape,
    table,
    path,
    graphql,
    order: () => orderedIds(`select id from ${table} where ${scope.column} = ? order by created_at desc, id desc`, [scope.value()]),
    async seed() {
      origin = await first();
      for (const createdAt of PAIRS) await clone(table, origin, { created_at: createdAt, ...extra(made++) });
    },
    insert: async (where) =>
      clone(table, origin, {
        created_at: where === 'head' ? headDate() : new Date(Date.UTC(2001, 0, 1) - nextTail() * 60_000).toISOString(),
        ...extra(made++),
      }),
  };
}

const pageOf = (field: string) => (data: Record<string, any>) => data[field];

const CASES: ListCase[] = [
  newestFirst(
    'a program’s executions (a JSON array)',
    'executions',
    { column: 'program_id', value: () => state.programId! },
    'array',
    () => `/api/programs/${state.programId}/executions`,
    () => ({
      query: `query($programId: ID!, $cursor: String) { page: executionPage(programId: $programId, limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } }`,
      variables: { programId: state.programId },
      page: pageOf('page'),
    }),
    async () => {
      state.programId = (await activeCampaign(acme, 1)).programId;
      const res = await acme.rest.post(`/api/programs/${state.programId}/executions`);
      expect(res.status).toBe(201);
      return res.body.id;
    },
  ),
  newestFirst(
    'the caller’s API keys ({apiKeys})',
    'api_keys',
    { column: 'user_id', value: () => acme.userId },
    'apiKeys',
    () => '/api/auth/api-keys',
    () => ({
      query: `query($cursor: String) { page: apiKeyPage(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } }`,
      variables: {},
      page: pageOf('page'),
    }),
    async () => {
      const res = await acme.rest.post('/api/auth/api-keys', { name: 'Walked', prefix: 'walk' });
      expect(res.status).toBe(201);
      return res.body.id;
    },
    () => ({ key_hash: randomBytes(32).toString('hex') }),
  ),
  newestFirst(
    'a base’s documents',
    'knowledge_documents',
    { column: 'knowledge_base_id', value: () => state.baseId! },
    'data',
    () => `/api/knowledge-bases/${state.baseId}/documents`,
    () => ({
      query: `query($id: ID!, $cursor: String) { knowledgeBase(id: $id) { documents(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } } }`,
      variables: { id: state.baseId },
      page: (data) => data.knowledgeBase.documents,
    }),
    async () => {
      const base = await acme.rest.post('/api/knowledge-bases', { name: 'Walked' });
      expect(base.status).toBe(201);
      state.baseId = base.body.id;
      const document = await acme.rest.post(`/api/knowledge-bases/${state.baseId}/documents`, { title: 'First', content: 'Some text.' });
      expect(document.status).toBe(201);
      return document.body.id;
    },
  ),
  newestFirst(
    'the credit ledger',
    'credit_ledger',
    { column: 'organization_id', value: () => acme.organizationId },
    'data',
    () => '/api/organization/credit-ledger',
    () => ({
      query: `query($cursor: String) { page: creditLedger(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } }`,
      variables: {},
      page: pageOf('page'),
    }),
    async () => {
      await acme.grantCredits(5);
      const [row] = await app.sql<{ id: string }>('select id from credit_ledger where organization_id = ?', [acme.organizationId]);
      return row!.id;
    },
  ),
  newestFirst(
    'an endpoint’s deliveries',
    'webhook_deliveries',
    { column: 'endpoint_id', value: () => state.endpointId! },
    'data',
    () => `/api/webhook-endpoints/${state.endpointId}/deliveries`,
    () => ({
      query: `query($id: ID!, $cursor: String) { webhookEndpoint(id: $id) { deliveries(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } } }`,
      variables: { id: state.endpointId },
      page: (data) => data.webhookEndpoint.deliveries,
    }),
    async () => {
      // A public address needs no DNS lookup in a sandbox without network; the deliveries are written here, already sent.
      const endpoint = await acme.rest.post('/api/webhook-endpoints', { url: 'https://93.184.215.14/hooks/walked', eventTypes: ['call.ended'] });
      expect(endpoint.status).toBe(201);
      state.endpointId = endpoint.body.id;
      const id = randomUUID();
      await app.sql(
        `insert into webhook_deliveries (id, created_at, updated_at, organization_id, endpoint_id, message_id, event_type, event_created_at, status, attempts, next_attempt_at)
         values (?, now(), now(), ?, ?, ?, 'call.ended', now(), 'succeeded', 1, now())`,
        [id, acme.organizationId, state.endpointId, randomUUID()],
      );
      return id;
    },
    () => ({ message_id: randomUUID() }),
  ),
  {
    name: 'a conversation’s messages (by sequence)',
    shape: 'data',
    table: 'messages',
    path: () => `/api/conversations/${state.conversationId}/messages`,
    graphql: () => ({
      query: `query($id: ID!, $cursor: String) { conversation(id: $id) { messages(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } } }`,
      variables: { id: state.conversationId },
      page: (data) => data.conversation.messages,
    }),
    order: () => orderedIds('select id from messages where conversation_id = ? order by sequence, id', [state.conversationId]),
    async seed() {
      const agent = await acme.rest.post('/api/agents', { name: 'Walker', instructions: 'Answer.', modelConfig: { model: 'builtin/echo' } });
      expect(agent.status).toBe(201);
      expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
      state.agentId = agent.body.id;
      const conversation = await acme.rest.post(`/api/agents/${agent.body.id}/conversations`);
      expect(conversation.status).toBe(201);
      state.conversationId = conversation.body.id;
      expect((await acme.rest.post(`/api/conversations/${state.conversationId}/messages`, { message: 'Hello' })).status).toBe(200);
      const [first] = await app.sql<{ id: string }>('select id from messages where conversation_id = ? order by sequence limit 1', [state.conversationId]);
      state.messageId = first!.id;
      for (let sequence = 10; sequence < 15; sequence++) await clone('messages', state.messageId, { sequence });
    },
    insert: async (where) => clone('messages', state.messageId!, { sequence: where === 'head' ? -nextTail() : 1000 + nextTail() }),
  },
  {
    name: 'a conversation’s tool calls (by sequence, ties by id)',
    shape: 'data',
    table: 'tool_calls',
    path: () => `/api/conversations/${state.conversationId}/tool-calls`,
    graphql: () => ({
      query: `query($id: ID!, $cursor: String) { conversation(id: $id) { toolCalls(limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } } }`,
      variables: { id: state.conversationId },
      page: (data) => data.conversation.toolCalls,
    }),
    order: () => orderedIds('select id from tool_calls where conversation_id = ? order by sequence, id', [state.conversationId]),
    async seed() {
      // After the messages' case: the same conversation.
      for (const sequence of [1, 2, 2, 3, 4, 4, 5]) await insertToolCall(sequence);
    },
    insert: async (where) => insertToolCall(where === 'head' ? -nextTail() : 1000 + nextTail()),
  },
  {
    name: 'a live program’s triggers (a JSON array, by triggerAt)',
    shape: 'array',
    table: 'contact_triggers',
    path: () => `/api/programs/${state.liveProgramId}/triggers`,
    graphql: () => ({
      query: `query($programId: ID!, $cursor: String) { page: triggerPage(programId: $programId, limit: ${LIMIT}, cursor: $cursor) { data { id } meta { nextCursor } } }`,
      variables: { programId: state.liveProgramId },
      page: pageOf('page'),
    }),
    order: () => orderedIds('select id from contact_triggers where program_id = ? order by trigger_at, id', [state.liveProgramId]),
    async seed() {
      const contact = await createContact(acme, { attributes: { birthday: '2050-01-01' } });
      state.liveProgramId = await insertProgram(app, acme, { audienceId: await createAudience(acme, [contact]) });
      await syncProgram(app, state.liveProgramId);
      const [first] = await app.sql<{ id: string }>('select id from contact_triggers where program_id = ?', [state.liveProgramId]);
      state.triggerId = first!.id;
      for (const [i, day] of ['02', '02', '03', '03', '04', '04'].entries()) {
        await clone('contact_triggers', state.triggerId, { attribute_value: `2050-02-${day}-${i}`, trigger_at: `2050-02-${day}T09:00:00.000Z` });
      }
    },
    insert: async (where) =>
      clone('contact_triggers', state.triggerId!, {
        // Cancelled: a trigger due in 2001 must not fire while the list is walked.
        status: 'cancelled',
        attribute_value: `${where}-${randomUUID()}`.slice(0, 40),
        // Oldest first: each row inserted first is earlier than the ones before it, each last one later.
        trigger_at: new Date(where === 'head' ? Date.UTC(2001, 0, 1) - nextTail() * 60_000 : Date.UTC(2999, 0, 1) + nextTail() * 60_000).toISOString(),
      }),
  },
];

async function insertToolCall(sequence: number): Promise<string> {
  const id = randomUUID();
  await app.sql(
    `insert into tool_calls (id, created_at, updated_at, organization_id, conversation_id, agent_id, sequence, after_sequence, tool, source, arguments, status, duration_ms)
     values (?, now(), now(), ?, ?, ?, ?, 0, 'lookup', 'http', '{}'::jsonb, 'succeeded', 5)`,
    [id, acme.organizationId, state.conversationId, state.agentId, sequence],
  );
  return id;
}

/** One page on REST: its ids and the next page's cursor (meta.nextCursor, or X-Next-Cursor on an array). */
async function restPage(org: TestOrganization, list: ListCase, cursor: string | null): Promise<{ ids: string[]; next: string | null; link: string | null }> {
  const res = await org.rest.get(`${list.path()}?limit=${LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
  expect([list.name, res.status]).toEqual([list.name, 200]);
  if (list.shape === 'data') return { ids: ids(res.body.data), next: res.body.meta.nextCursor, link: null };
  const rows = list.shape === 'array' ? res.body : res.body.apiKeys;
  return { ids: ids(rows), next: res.headers.get('x-next-cursor'), link: res.headers.get('link') };
}

async function graphqlPage(org: TestOrganization, list: ListCase, cursor: string | null): Promise<{ ids: string[]; next: string | null }> {
  const { query, variables, page } = list.graphql();
  const result = await org.graphql.run(parse(query) as TypedDocumentNode<Record<string, any>, Record<string, unknown>>, { ...variables, cursor });
  expect([list.name, result.errors]).toEqual([list.name, undefined]);
  const answer = page(result.data!);
  return { ids: ids(answer.data), next: answer.meta.nextCursor };
}

beforeAll(async () => {
  // A CREDENTIALS_KEY seals the webhook endpoint's secret.
  app = await startTestApp({
    telephony: { twilioApiBaseUrl: 'https://api.twilio.com', credentialsKey: randomBytes(32) },
    webhooks: { allowPrivate: false, timeoutMs: 1000 },
  });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  await other.grantCredits(1);
  for (const list of CASES) await list.seed();
});
afterAll(() => app?.close());

describe.each(CASES.map((list) => [list.name, list] as const))('%s', (_name, list) => {
  it.each(['REST', 'GraphQL'] as const)('%s: walked by cursor to the end, every row once, in order, while rows are inserted between pages', async (door) => {
    const read = (cursor: string | null) => (door === 'REST' ? restPage(acme, list, cursor) : graphqlPage(acme, list, cursor));
    const before = await list.order();
    expect(before.length).toBeGreaterThanOrEqual(7);
    const walked: string[] = [];
    const skipped: string[] = [];
    let page: { ids: string[]; next: string | null; link?: string | null } = await read(null);
    walked.push(...page.ids);
    expect(page.ids).toEqual(before.slice(0, LIMIT));
    while (page.next) {
      // One row before the cursor (never shown by this walk) and one after it (shown at the end).
      skipped.push(await list.insert('head'));
      await list.insert('tail');
      page = await read(page.next);
      // On an array, a walk by cursor gets its next page as a cursor link.
      if (door === 'REST' && list.shape !== 'data' && page.next) expect(page.link).toMatch(/[?&]cursor=[^>]+>; rel="next"/);
      expect(page.ids.length).toBeLessThanOrEqual(LIMIT);
      walked.push(...page.ids);
    }
    const after = await list.order();
    expect(new Set(walked).size).toBe(walked.length);
    for (const id of before) expect(walked).toContain(id);
    expect(walked).toEqual(after.filter((id) => !skipped.includes(id)));
  });

  it('refuses a cursor that is not one it answered, or was made for another order, the same on both doors', async () => {
    const { next } = await restPage(acme, list, null);
    expect(next).toEqual(expect.any(String));
    const decoded = JSON.parse(Buffer.from(next!, 'base64url').toString('utf8')) as unknown[];
    const tampered = Buffer.from(JSON.stringify([...decoded.slice(0, 4), ['x', 'not-an-id'], decoded[5]])).toString('base64url');
    // A sort value that is no date (or no number, for a sequence): refused before it reaches the statement.
    const badValue = Buffer.from(JSON.stringify([...decoded.slice(0, 4), ['x', randomUUID()], decoded[5]])).toString('base64url');
    const otherOrder = Buffer.from(JSON.stringify([decoded[0], decoded[1], 'name', 'asc', decoded[4], decoded[5]])).toString('base64url');
    for (const bad of ['not a cursor!', tampered, badValue, otherOrder]) {
      const res = await acme.rest.get(`${list.path()}?limit=${LIMIT}&cursor=${encodeURIComponent(bad)}`);
      expect([list.name, res.status, res.body.code, res.body.errors?.map((error: { field: string }) => error.field)]).toEqual([
        list.name,
        400,
        'BAD_USER_INPUT',
        ['cursor'],
      ]);
      const { query, variables } = list.graphql();
      const result = await acme.graphql.run(parse(query) as TypedDocumentNode<Record<string, any>, Record<string, unknown>>, { ...variables, cursor: bad });
      expect([list.name, result.errors?.[0]?.extensions.code, result.errors?.[0]?.extensions.errors?.map((error) => error.field)]).toEqual([
        list.name,
        'BAD_USER_INPUT',
        ['cursor'],
      ]);
      expect(result.errors?.[0]?.extensions.errors?.[0]?.message).toBe(res.body.errors[0].message);
    }
  });

  it('shows another organization nothing of the list through its cursor', async () => {
    const { next } = await restPage(acme, list, null);
    const own = new Set(await list.order());
    const res = await other.rest.get(`${list.path()}?limit=${LIMIT}&cursor=${encodeURIComponent(next!)}`);
    const { query, variables, page } = list.graphql();
    const result = await other.graphql.run(parse(query) as TypedDocumentNode<Record<string, any>, Record<string, unknown>>, { ...variables, cursor: next });
    if (list.table === 'api_keys' || list.table === 'credit_ledger') {
      // The organization's own list, read from that position: none of Acme's rows.
      expect(res.status).toBe(200);
      const rows: { id: string }[] = list.shape === 'apiKeys' ? res.body.apiKeys : res.body.data;
      for (const row of rows) expect(own.has(row.id)).toBe(false);
      expect(result.errors).toBeUndefined();
      for (const row of page(result.data!).data) expect(own.has(row.id)).toBe(false);
    } else {
      // The list's parent is Acme's: not found, whatever the cursor.
      expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
      expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
  });
});

it('a cursor of another list of the same order reads only this list’s rows', async () => {
  const executions = CASES.find((list) => list.table === 'executions')!;
  const ledger = CASES.find((list) => list.table === 'credit_ledger')!;
  const { next } = await restPage(acme, executions, null);
  const res = await acme.rest.get(`${ledger.path()}?limit=100&cursor=${encodeURIComponent(next!)}`);
  expect(res.status).toBe(200);
  const ledgerIds = new Set(await ledger.order());
  for (const row of res.body.data as { id: string }[]) expect(ledgerIds.has(row.id)).toBe(true);
});

it('keeps page and limit as they were: page 2 is the rows after page 1, with the page links of an array', async () => {
  const executions = CASES.find((list) => list.table === 'executions')!;
  const order = await executions.order();
  const res = await acme.rest.get(`${executions.path()}?page=2&limit=${LIMIT}`);
  expect(ids(res.body)).toEqual(order.slice(LIMIT, 2 * LIMIT));
  expect(res.headers.get('x-total-count')).toBe(String(order.length));
  expect(res.headers.get('link')).toContain(`page=3&limit=${LIMIT}>; rel="next"`);
  expect(res.headers.get('x-next-cursor')).toEqual(expect.any(String));
});
