import { answeredByDatabase } from '../../src/graphql/sql-answers.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createAgent, createConfiguredAgent, TRICKY, TRICKY_METADATA } from '../helpers/tricky-agents.js';
import { withCursors } from '../helpers/pages.js';

// Queries PostgreSQL answers whole (src/graphql/sql-answers.ts). Each query here is sent twice: as
// it is, which the database must answer (the counter moves by one), and with `@include(if: true)`
// on its first field, which means the same but is left to the executor (graphql-jit and the
// resolvers, the counter stays). Both answers must be the same JSON: the same keys in the same
// order, the same values (not the same bytes: the database's rows are sent as PostgreSQL wrote them,
// with a space around each `:`, as on REST). The data holds what could tell them apart: texts with quotes, backslashes,
// control characters, emoji and line separators; JSON columns with nested objects, floats, missing
// keys and JSON null; microsecond timestamps; an archived agent; conversations in several states.
// What the database does not answer is answered as before; another organization sees none of it;
// bad input gets the same error as on REST.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let configuredId: string;

async function post(org: TestOrganization, query: string, variables: Record<string, unknown> = {}): Promise<{ status: number; text: string; body: any }> {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': org.apiKey },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

/** `query` with `@include(if: true)` after its first selected field's name and arguments: the same meaning, not answered by the database. */
function viaExecutor(query: string): string {
  return query.replace(/(\{\s*(?:\w+\s*:\s*)?\w+(?:\([^)]*\))?)/, '$1 @include(if: true)');
}

/** Sends `query` both ways; expects the database to answer the first, and both the same. */
async function sameBothWays(org: TestOrganization, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const before = answeredByDatabase();
  const fast = await post(org, query, variables);
  expect(answeredByDatabase()).toBe(before + 1);
  const slow = await post(org, viaExecutor(query), variables);
  expect(answeredByDatabase()).toBe(before + 1);
  expect(fast.status).toBe(200);
  expect(fast.body.errors).toBeUndefined();
  expect(JSON.stringify(fast.body)).toBe(JSON.stringify(slow.body));
  return fast.body.data;
}

async function conversation(org: TestOrganization, agentId: string, status: string, title: string | null, createdAt: string): Promise<void> {
  await app.sql(
    `insert into conversations (id, created_at, updated_at, organization_id, agent_id, status, title, message_count)
     values (gen_random_uuid(), ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, 0)`,
    [createdAt, createdAt, org.organizationId, agentId, status, title],
  );
}

const AGENT_FIELDS = `id createdAt updatedAt name description instructions status version
  modelConfig { model modelSettings providerOptions }
  voiceConfig { pipelineMode voiceId stsProvider sttProvider sttModel ttsProvider ttsModel language }
  memoryConfig { enabled lastMessages semanticRecall }
  metadata knowledgeBaseConfig resolutionCriteria { label description }
  analysisPlan { summary structuredData } createdBy deletedAt organizationId hasPolicy`;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  await createAgent(acme, { name: 'Plain' });
  const configured = await createConfiguredAgent(app, acme);
  await app.sql(
    `update agents set created_at = '2026-03-04T05:06:07.123456Z', memory_config = '{"enabled": true, "lastMessages": 7, "semanticRecall": null}'::jsonb where id = ?`,
    [configured],
  );
  configuredId = configured;
  const archived = await createAgent(acme, { name: 'Archived one' });
  expect((await acme.rest.delete(`/api/agents/${archived}`)).status).toBeLessThan(300);
  for (let i = 0; i < 4; i++) await createAgent(acme, { name: `Agent ${i}`, description: i % 2 ? null : `Number ${i}` });
  await conversation(acme, configured, 'ended', TRICKY, '2026-05-01T10:00:00.000001Z');
  await conversation(acme, configured, 'active', null, '2026-05-02T10:00:00Z');
  await conversation(acme, configured, 'pending', 'third', '2026-05-03T10:00:00Z');
  await conversation(acme, configured, 'failed', 'fourth', '2026-05-04T10:00:00.999Z');
  const theirs = await createAgent(other, { name: 'Other’s agent' });
  await conversation(other, theirs, 'ended', 'theirs', '2026-05-05T10:00:00Z');
});

afterAll(async () => {
  await app?.close();
});

describe('queries the database answers whole', () => {
  it('a page of agents with every field of the type and its meta', async () => {
    const data = await sameBothWays(
      acme,
      `{ agents(limit: 20) { data { ${AGENT_FIELDS} } meta { page limit total totalPages hasNextPage hasPreviousPage nextCursor prevCursor lastCursor } } }`,
    );
    const names = data.agents.data.map((agent: { name: string }) => agent.name);
    expect(names).toEqual(expect.arrayContaining(['Plain', 'Configured', 'Agent 0', 'Agent 3']));
    expect(names).not.toContain('Archived one');
    expect(names).not.toContain('Other’s agent');
    const configured = data.agents.data.find((agent: { name: string }) => agent.name === 'Configured');
    // The rows hold what the comparison is about.
    expect(configured).toMatchObject({ description: TRICKY, hasPolicy: true, createdAt: '2026-03-04T05:06:07.123Z' });
    expect(configured.metadata).toEqual(TRICKY_METADATA);
    expect(configured.modelConfig.modelSettings).toEqual({ temperature: 0.7, maxOutputTokens: 256 });
    expect(JSON.stringify(configured)).not.toContain('discount');
    expect(data.agents.meta).toEqual(withCursors({ page: 1, limit: 20, total: 6, totalPages: 1, hasNextPage: false, hasPreviousPage: false }));
  });

  it('sends the rows as the database wrote them, not parsed and written again', async () => {
    const res = await post(acme, `{ agents(limit: 2) { data { id name } meta { total } } }`);
    // PostgreSQL's json_build_object spaces its members; JSON.stringify would not.
    expect(res.text).toMatch(/^\{"data":\{"agents":\{"data":\[\{"id" : "[0-9a-f-]{36}", "name" : "[^"]+"\},/);
    expect(res.text.endsWith('],"meta":{"total":6}}}}\n')).toBe(true);
  });

  it('aliases, __typename at every level, fragments and variables', async () => {
    const data = await sameBothWays(
      acme,
      `query Named($limit: Int!, $page: Int!) { __typename list: agents(limit: $limit, page: $page, sortBy: "name", sortOrder: asc) {
        __typename items: data { __typename key: id ...Naming ... on Agent { model: modelConfig { __typename name: model } } criteria: resolutionCriteria { label } }
        where: meta { __typename at: page total hasNextPage } } }
      fragment Naming on Agent { title: name status }`,
      { limit: 2, page: 2 },
    );
    expect(data.__typename).toBe('Query');
    expect(data.list.__typename).toBe('AgentPage');
    expect(data.list.items.map((agent: { title: string }) => agent.title)).toEqual(['Agent 2', 'Agent 3']);
    expect(data.list.where).toEqual({ __typename: 'PageMeta', at: 2, total: 6, hasNextPage: true });
  });

  it('each agent’s page of conversations, with its own arguments, aliases and meta', async () => {
    const data = await sameBothWays(
      acme,
      `{ agents(limit: 20, search: "config") { data { name
          conversations(limit: 2) { data { id status title createdAt agentId } meta { total totalPages hasNextPage page limit hasPreviousPage } }
          ended: conversations(status: ended) { __typename data { title } }
          oldest: conversations(limit: 1, page: 2, sortOrder: asc) { data { title status } meta { page total } } } } }`,
    );
    const [agent] = data.agents.data;
    expect(agent.name).toBe('Configured');
    expect(agent.conversations.data.map((each: { title: string | null }) => each.title)).toEqual(['fourth', 'third']);
    expect(agent.conversations.meta).toEqual({ total: 4, totalPages: 2, hasNextPage: true, page: 1, limit: 2, hasPreviousPage: false });
    expect(agent.ended.data).toEqual([{ title: TRICKY }]);
    expect(agent.oldest).toEqual({ data: [{ title: null, status: 'active' }], meta: { page: 2, total: 4 } });
  });

  it('two lists in one query, archived agents when asked, an empty page', async () => {
    const data = await sameBothWays(
      acme,
      `{ archived: agents(status: archived) { data { name deletedAt } meta { total } } none: agents(search: "nobody") { data { id } meta { total totalPages } } }`,
    );
    expect(data.archived.data).toEqual([{ name: 'Archived one', deletedAt: expect.stringMatching(/Z$/) }]);
    expect(data.none).toEqual({ data: [], meta: { total: 0, totalPages: 0 } });
  });

  // Counting the list reads every matching row before the page can be cut (count(*) over ()): only
  // when the selection shows the count or what is computed from it.
  it.each([
    ['no meta', '', false, undefined],
    ['the page, its limit and hasPreviousPage', 'meta { page limit hasPreviousPage }', false, { page: 2, limit: 2, hasPreviousPage: true }],
    ['hasNextPage', 'meta { hasNextPage }', true, { hasNextPage: true }],
    ['totalPages', 'meta { totalPages }', true, { totalPages: 3 }],
    ['total', 'meta { page total }', true, { page: 2, total: 6 }],
  ])('counts the list only when the selection shows it: %s', async (_what, meta, counted, expected) => {
    const query = `{ agents(limit: 2, page: 2) { data { name } ${meta} } }`;
    const statements = await recordStatements(app, async () => {
      await post(acme, query);
    });
    const reads = statements.filter((sql) => /from "agents"/.test(sql));
    expect(reads).toHaveLength(1);
    expect(/count\(\*\)/.test(reads[0]!)).toBe(counted);
    const data = await sameBothWays(acme, query);
    expect(data.agents.data.map((agent: { name: string }) => agent.name)).toEqual(['Agent 1', 'Agent 0']);
    expect(data.agents.meta).toEqual(expected);
  });

  it('an uncounted page past the end is empty, in one statement', async () => {
    const query = `{ agents(limit: 5, page: 9) { data { name } meta { page hasPreviousPage } } }`;
    const statements = await recordStatements(app, async () => {
      await post(acme, query);
    });
    expect(statements.filter((sql) => /from "agents"/.test(sql))).toHaveLength(1);
    expect(await sameBothWays(acme, query)).toEqual({ agents: { data: [], meta: { page: 9, hasPreviousPage: true } } });
  });

  it('another organization sees only its own rows, and its conversations only', async () => {
    const data = await sameBothWays(other, `{ agents { data { name conversations { data { title } meta { total } } } meta { total } } }`);
    expect(data.agents).toEqual({ data: [{ name: 'Other’s agent', conversations: { data: [{ title: 'theirs' }], meta: { total: 1 } } }], meta: { total: 1 } });
  });
});

describe('what the database does not answer is answered as before', () => {
  // Stored JSON that is not of its GraphQL type: the executor answers with an error (a non-null field
  // missing, a number that is no Int, a value that is no enum value, ...) or converts it (a number shown
  // as a String); the database's statement stops at such a row and the executor answers, as always.
  it.each([
    ['a non-null field missing', 'memory_config', '{"enabled": true}', true],
    ['an Int that is not an integer', 'memory_config', '{"enabled": true, "lastMessages": 7.5}', true],
    ['an Int out of range', 'memory_config', '{"enabled": true, "lastMessages": 3000000000}', true],
    ['a Boolean that is a string', 'memory_config', '{"enabled": "yes", "lastMessages": 7}', true],
    ['a value that is no enum value', 'voice_config', '{"pipelineMode": "telepathy"}', true],
    ['a String that is a number (converted: "42")', 'model_config', '{"model": 42}', false],
    ['a JSONObject that is an array', 'metadata', '[1, 2]', true],
    ['a null item of a list of non-null items', 'resolution_criteria', '[{"label": "a", "description": "b"}, null]', true],
    ['a list that is an object', 'resolution_criteria', '{"label": "a"}', true],
  ] as [string, string, string, boolean][])('%s', async (_what, column, value, erring) => {
    const [saved] = await app.sql<{ value: string | null }>(`select ${column}::text as value from agents where id = ?`, [configuredId]);
    await app.sql(`update agents set ${column} = ?::jsonb where id = ?`, [value, configuredId]);
    try {
      const query = `{ agents(search: "config") { data { ${AGENT_FIELDS} } } }`;
      const before = answeredByDatabase();
      const fast = await post(acme, query);
      const slow = await post(acme, viaExecutor(query));
      expect(answeredByDatabase()).toBe(before);
      expect(fast.body.errors !== undefined).toBe(erring);
      expect(fast.text.replace(/"requestId":"[^"]+"/g, '')).toBe(slow.text.replace(/"requestId":"[^"]+"/g, ''));
    } finally {
      await app.sql(`update agents set ${column} = ?::jsonb where id = ?`, [saved!.value, configuredId]);
    }
    // Back to stored values of their types: the database answers again.
    await sameBothWays(acme, `{ agents(search: "config") { data { ${AGENT_FIELDS} } } }`);
  });

  it('a conversation’s stored JSON not of its type stops the statement too, in the relation’s page', async () => {
    const [row] = await app.sql<{ id: string }>(`select id from conversations where agent_id = ? and title = 'third'`, [configuredId]);
    await app.sql(`update conversations set outcome = '[{"label": "paid", "met": "yes", "explanation": "x"}]'::jsonb where id = ?`, [row!.id]);
    try {
      const query = `{ agents(search: "config", limit: 1) { data { name conversations(limit: 4) { data { title outcome { label met explanation } } } } } }`;
      const before = answeredByDatabase();
      const fast = await post(acme, query);
      const slow = await post(acme, viaExecutor(query));
      expect(answeredByDatabase()).toBe(before);
      expect(fast.body.errors?.[0]?.path).toEqual(['agents', 'data', 0, 'conversations', 'data', 1, 'outcome', 0, 'met']);
      // The same answer (the errors' locations differ by the directive the second query has).
      const shown = (body: any) => ({ data: body.data, errors: body.errors.map((error: any) => [error.message, error.path, error.extensions.code]) });
      expect(shown(fast.body)).toEqual(shown(slow.body));
    } finally {
      await app.sql(`update conversations set outcome = null where id = ?`, [row!.id]);
    }
    await sameBothWays(
      acme,
      `{ agents(search: "config", limit: 1) { data { name conversations(limit: 4) { data { title outcome { label met explanation } } } } } }`,
    );
  });

  it.each([
    [
      'a field with a resolver of its own (a conversation’s agent)',
      `{ agents(search: "config") { data { conversations(limit: 1) { data { agent { name } } } } } }`,
    ],
    [
      'a relation of a relation (a conversation’s messages)',
      `{ agents(search: "config") { data { conversations(limit: 1) { data { messages { data { id } } } } } } }`,
    ],
    ['a list beside a field that is no list (me)', `{ agents(limit: 1) { data { id } } me { id } }`],
    ['a directive', `{ agents(limit: 1) { data { id name @skip(if: false) } } }`],
    ['the same key twice', `{ agents(limit: 1) { data { id id } } }`],
  ])('%s', async (_what, query) => {
    const before = answeredByDatabase();
    const res = await post(acme, query);
    expect(answeredByDatabase()).toBe(before);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.agents.data.length).toBeGreaterThan(0);
  });

  it('refuses the same bad input with the same error as REST (the executor answers it)', async () => {
    const before = answeredByDatabase();
    const graphql = await post(acme, '{ agents(limit: 1000) { data { id } } }');
    const rest = await acme.rest.get('/api/agents?limit=1000');
    expect(answeredByDatabase()).toBe(before);
    expect(rest.status).toBe(400);
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(graphql.body.errors?.[0]?.message).toBe(rest.body.detail ?? rest.body.message);
    const nested = await post(acme, '{ agents { data { conversations(limit: 0) { data { id } } } } }');
    expect(nested.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses an unauthenticated query as before', async () => {
    const before = answeredByDatabase();
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ agents { data { id } } }' }),
    });
    const body = (await res.json()) as any;
    expect(answeredByDatabase()).toBe(before);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('the answer budget', () => {
  it('refuses a page over RESPONSE_MAX_BYTES with the same refusal either way', async () => {
    const small = await startTestApp({ responseMaxBytes: 2500 });
    try {
      const org = await small.organization('Small');
      for (let i = 0; i < 8; i++) {
        const res = await org.rest.post('/api/agents', {
          name: `Long ${i}`,
          description: 'x'.repeat(300),
          instructions: 'Help.',
          modelConfig: { model: 'builtin/echo' },
        });
        expect(res.status).toBe(201);
      }
      const send = async (query: string) => {
        const res = await fetch(`${small.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': org.apiKey },
          body: JSON.stringify({ query }),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const before = answeredByDatabase();
      const fast = await send('{ agents { data { name description } } }');
      const slow = await send('{ agents { data @include(if: true) { name description } } }');
      expect(answeredByDatabase()).toBe(before);
      expect(fast.body.data ?? null).toBeNull();
      expect(fast.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      // Charged row by row as the database wrote them (at least), where the executor's answer is measured whole.
      expect(fast.body.errors?.[0]?.message).toMatch(/^The answer would be at least \d+ bytes, over the limit of 2500/);
      expect(slow.body.errors?.[0]?.message).toMatch(/^The answer would be \d+ bytes, over the limit of 2500/);
      expect(fast.status).toBe(slow.status);
      expect(slow.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    } finally {
      await small.close();
    }
  });
});
