import { readFileSync } from 'node:fs';
import { buildSchema, getIntrospectionQuery } from 'graphql';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ERROR_STATUS, ERROR_TITLE, errorAnchor, type ErrorCode } from '../../src/common/errors.js';
import {
  ApiKeysDocument,
  CallFlowsDocument,
  CreateAgentDocument,
  CreateContactDocument,
  ExecutionsDocument,
  KnowledgeBasesDocument,
  TeamsDocument,
  TriggersDocument,
} from '../generated/graphql.js';
import { activeCampaign, flowInput } from '../programs/fixtures.js';
import { createAudience, createContact, insertProgram, syncProgram } from '../triggers/fixtures.js';
import { REST_ROUTES } from '../../src/doors.js';
import { paramsOf, resourceOfParam, seed, type Seeded } from '../fuzz/fixtures.js';
import { agentInput } from '../agents/fixtures.js';
import { MAX_INPUT_DEPTH } from '../../src/common/validation.js';
import { gql } from 'graphql-request';
import { createLogger } from '../../src/common/logger.js';
import { withCursors } from '../helpers/pages.js';

// What the doors answer: names, deletes, error documentation, list shapes, response sizes, uppercase ids,
// media types and methods, client input and hostile input, one describe each (they were one file each), each on its own app(s) and database(s).
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('names', () => {
  let app: TestApp;
  let paths: Record<string, Record<string, { operationId: string }>>;
  beforeAll(async () => {
    app = await startTestApp();
    paths = (await app.rest().get('/api/openapi.json')).body.paths;
  });
  afterAll(() => app.close());

  const schema = buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));
  const queries = Object.keys(schema.getQueryType()!.getFields());
  const mutations = Object.keys(schema.getMutationType()!.getFields());

  /** REST reads whose GraphQL form is a field of another type, not a root field. */
  const NESTED_ONLY: Record<string, string> = {
    listMessages: 'Conversation.messages',
    listDocuments: 'KnowledgeBase.documents',
    listWebhookDeliveries: 'WebhookEndpoint.deliveries',
    listAudienceMembers: 'Audience.contacts',
    listConversationToolCalls: 'Conversation.toolCalls',
  };
  /** REST answers GraphQL does not give: a file download (text/csv, a call's recording) has no GraphQL form. */
  // The SSE stream's GraphQL counterparts are subscriptions (executionUpdated, callUpdated), not a query.
  // A CSV upload has none either: GraphQL createContactImport answers the uploadUrl the CSV is PUT to (uploadContactImportFile).
  const REST_ONLY = new Set([
    'exportExecutionCalls',
    'streamExecutionEvents',
    'downloadCallRecording',
    'exportContactImportRefusals',
    'uploadContactImportFile',
  ]);

  /** `knowledge-bases` → `knowledgeBaseId`, `programs` → `programId`, `audience` → `audienceId`. */
  function parentId(segment: string): string {
    const singular = segment.replace(/s$/, '');
    return `${singular.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())}Id`;
  }

  describe('one set of names on both doors', () => {
    it('a path parameter is `id` for the resource the path is about and `<parent>Id` for its parent', () => {
      const wrong: string[] = [];
      for (const path of Object.keys(paths)) {
        const segments = path.split('/').slice(2);
        segments.forEach((segment, index) => {
          const name = /^\{(\w+)\}$/.exec(segment)?.[1];
          if (!name) return;
          const next = segments[index + 1];
          const parentOfAList =
            next !== undefined &&
            segments
              .slice(index + 1)
              .some((later) => /^\{/.test(later) || ['members', 'executions', 'triggers', 'documents', 'conversations', 'messages'].includes(later));
          // A member of a team is its user; a document keeps the documentId CONTRACT.md §9 gives document(knowledgeBaseId, documentId).
          const expected = parentOfAList
            ? parentId(segments[index - 1]!)
            : segments[index - 1] === 'members'
              ? 'userId'
              : segments[index - 1] === 'documents'
                ? 'documentId'
                : 'id';
          if (name !== expected) wrong.push(`${path}: {${name}} should be {${expected}}`);
        });
      }
      expect(wrong).toEqual([]);
    });

    it('a REST operationId is the GraphQL field of the same operation: the mutation itself, get<Field> or list<Field> for a query', () => {
      const unmatched: string[] = [];
      for (const methods of Object.values(paths)) {
        for (const { operationId } of Object.values(methods)) {
          if (NESTED_ONLY[operationId] || REST_ONLY.has(operationId)) continue;
          const read = /^(get|list)([A-Z]\w*)$/.exec(operationId);
          const field = read ? read[2]!.charAt(0).toLowerCase() + read[2]!.slice(1) : undefined;
          if (mutations.includes(operationId) || (field && queries.includes(field))) continue;
          unmatched.push(operationId);
        }
      }
      expect(unmatched).toEqual([]);
    });

    it('the renamed operations: createExecution(programId) makes an execution, startExecution(id) starts it, on both doors', () => {
      expect(mutations).toEqual(expect.arrayContaining(['createExecution', 'startExecution']));
      expect(mutations).not.toContain('runExecution');
      expect(
        schema
          .getMutationType()!
          .getFields()
          .createExecution!.args.map((arg) => arg.name)
          .sort(),
      ).toEqual(['input', 'programId']);
      expect(
        schema
          .getMutationType()!
          .getFields()
          .startExecution!.args.map((arg) => arg.name),
      ).toEqual(['id']);
      expect(paths['/api/programs/{programId}/executions']!.post!.operationId).toBe('createExecution');
      expect(paths['/api/executions/{id}/start']!.post!.operationId).toBe('startExecution');
      expect(Object.keys(paths).filter((path) => path.startsWith('/api/entities'))).toEqual([]);
      expect(paths['/api/business-entities']!.get!.operationId).toBe('listBusinessEntities');
    });
  });
});

describe('delete-answers', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** The two DELETEs whose answer the interface fixes; every other one answers 204 with no body. */
  const FIXED: Record<string, string> = {
    '/api/auth/api-keys/{id}': '200', // endpoint 17: {message}
    '/api/agents/{id}': '200', // endpoint 4: the archived agent
  };

  describe('DELETE answers one way', () => {
    it('every DELETE route of the OpenAPI document declares 204 without a body, but the two the interface fixes', async () => {
      const { body: doc } = await app.rest().get('/api/openapi.json');
      const deletes = Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>)
        .filter(([, methods]) => methods.delete)
        .map(([path, methods]) => {
          const success = Object.keys(methods.delete!.responses).filter((status) => status.startsWith('2'));
          return { path, success, hasBody: success.some((status) => methods.delete!.responses[status]!.content !== undefined) };
        });
      expect(deletes.length).toBeGreaterThanOrEqual(10);
      for (const { path, success, hasBody } of deletes) {
        const expected = FIXED[path] ?? '204';
        expect({ path, success, hasBody }).toEqual({ path, success: [expected], hasBody: expected !== '204' });
      }
    });
  });
});

describe('error-docs', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  async function page(url: string) {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), html: await res.text() };
  }

  describe('/docs/errors', () => {
    it('is an HTML page, served without credentials, with a section per code of the error table: status, title, what to do', async () => {
      const docs = await page(`${app.baseUrl}/docs/errors`);
      expect(docs.status).toBe(200);
      expect(docs.type).toContain('text/html');
      const sections = [...docs.html.matchAll(/<section id="([a-z-]+)"><h2><code>(\w+)<\/code> — (\d+) ([^<]+)<\/h2><p>(.+?)<\/p><\/section>/g)];
      expect(sections.map((section) => section[2])).toEqual(Object.keys(ERROR_STATUS));
      for (const [, anchor, code, status, title, help] of sections) {
        expect([anchor, Number(status), title]).toEqual([errorAnchor(code as ErrorCode), ERROR_STATUS[code as ErrorCode], ERROR_TITLE[code as ErrorCode]]);
        expect(help!.length).toBeGreaterThan(30);
      }
    });

    it("every problem's type leads to the section of its code on the gateway's own page", async () => {
      const agent = await acme.rest.post('/api/agents', {});
      const answers = [
        agent,
        await acme.rest.get('/api/agents/00000000-0000-4000-8000-000000000000'),
        await acme.rest.request('PATCH', '/api/agents'),
        await app.rest().get('/api/users/me'),
      ];
      expect(answers.map((res) => res.body.code)).toEqual(['BAD_USER_INPUT', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNAUTHENTICATED']);
      for (const res of answers) {
        const link = new URL(res.body.type, `${app.baseUrl}/api/agents`);
        expect(link.origin).toBe(app.baseUrl);
        expect(link.hash).toBe(`#${errorAnchor(res.body.code)}`);
        const docs = await page(link.href);
        expect(docs.status).toBe(200);
        expect(docs.html).toContain(`<section id="${link.hash.slice(1)}"><h2><code>${res.body.code}</code> — ${res.status} `);
      }
    });
  });

  describe('GraphQL introspection turned off', () => {
    it('says which variable turns it on', async () => {
      const closed = await startTestApp({ graphql: { ...app.config.graphql, introspection: false } });
      try {
        const res = await fetch(`${closed.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: getIntrospectionQuery() }),
        });
        const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(body.errors[0]!.message).toMatch(/GRAPHQL_INTROSPECTION=true/);
        expect(body.errors[0]!.message).not.toMatch(/pass introspection: true to ApolloServer/);
      } finally {
        await closed.close();
      }
    });
  });

  describe('GET queries on /graphql (as Getting started says)', () => {
    it('need the apollo-require-preflight header (CSRF protection); with it they answer', async () => {
      const url = `${app.baseUrl}/graphql?query=${encodeURIComponent('{ me { id } }')}`;
      const blocked = await fetch(url, { headers: { 'x-api-key': acme.apiKey } });
      expect(blocked.status).toBe(400);
      expect(await blocked.text()).toMatch(/Cross-Site Request Forgery/);
      const allowed = await fetch(url, { headers: { 'x-api-key': acme.apiKey, 'apollo-require-preflight': 'true' } });
      expect(allowed.status).toBe(200);
      expect(((await allowed.json()) as { data: { me: { id: string } } }).data.me.id).toBe(acme.userId);
    });
  });
});

describe('list-shapes', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

  /** Lists that grew into pages: REST `{data, meta}`, GraphQL `XPage`, the same arguments on both. */
  const PAGED = [
    {
      name: 'teams',
      path: '/api/teams',
      create: (org: TestOrganization, name: string) => org.rest.post('/api/teams', { name }),
      graphql: async (org: TestOrganization, variables: Record<string, unknown>) => {
        const result = await org.graphql.run(TeamsDocument, variables);
        return { page: result.data?.teams, errors: result.errors };
      },
    },
    {
      name: 'call flows',
      path: '/api/call-flows',
      create: (org: TestOrganization, name: string) => org.rest.post('/api/call-flows', { ...flowInput(), name }),
      graphql: async (org: TestOrganization, variables: Record<string, unknown>) => {
        const result = await org.graphql.run(CallFlowsDocument, variables);
        return { page: result.data?.callFlows, errors: result.errors };
      },
    },
    {
      name: 'knowledge bases',
      path: '/api/knowledge-bases',
      create: (org: TestOrganization, name: string) => org.rest.post('/api/knowledge-bases', { name }),
      graphql: async (org: TestOrganization, variables: Record<string, unknown>) => {
        const result = await org.graphql.run(KnowledgeBasesDocument, variables);
        return { page: result.data?.knowledgeBases, errors: result.errors };
      },
    },
  ];

  describe.each(PAGED)('the $name list', ({ path, create, graphql }) => {
    const created: string[] = [];
    beforeAll(async () => {
      for (const name of ['Alpha', 'Bravo', 'Charlie']) {
        const res = await create(acme, `${name} ${path}`);
        expect(res.status).toBe(201);
        created.push(res.body.id);
      }
    });

    it('pages {data, meta} on REST and the same page type on GraphQL, newest first by default', async () => {
      const first = await acme.rest.get(`${path}?limit=2`);
      expect(first.status).toBe(200);
      expect(ids(first.body.data)).toEqual([created[2], created[1]]);
      expect(first.body.meta).toEqual(withCursors({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
      const second = await acme.rest.get(`${path}?limit=2&page=2`);
      expect(ids(second.body.data)).toEqual([created[0]]);
      expect(second.body.meta).toMatchObject({ page: 2, hasNextPage: false, hasPreviousPage: true });

      const { page } = await graphql(acme, { limit: 2, page: 2 });
      expect(ids(page!.data)).toEqual(ids(second.body.data));
      expect(page!.meta).toEqual(second.body.meta);
    });

    it('searches and sorts by an allow-listed field on both doors', async () => {
      const rest = await acme.rest.get(`${path}?search=bRaVo`);
      expect(ids(rest.body.data)).toEqual([created[1]]);
      expect((await graphql(acme, { search: 'bRaVo' })).page!.data.map((row) => row.id)).toEqual([created[1]]);

      const byName = await acme.rest.get(`${path}?sortBy=name&sortOrder=asc`);
      expect(ids(byName.body.data)).toEqual(created);
      expect(ids((await graphql(acme, { sortBy: 'name', sortOrder: 'asc' })).page!.data)).toEqual(created);
    });

    it('refuses an unknown sortBy and a limit over 100 with BAD_USER_INPUT on both doors', async () => {
      const sort = await acme.rest.get(`${path}?sortBy=secret`);
      expect([sort.status, sort.body.code, sort.body.errors[0].field]).toEqual([400, 'BAD_USER_INPUT', 'sortBy']);
      const sortErrors = (await graphql(acme, { sortBy: 'secret' })).errors;
      expect(sortErrors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');

      const limit = await acme.rest.get(`${path}?limit=101`);
      expect([limit.status, limit.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect((await graphql(acme, { limit: 101 })).errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    });

    it('shows another organization none of them', async () => {
      expect((await other.rest.get(path)).body.meta.total).toBe(0);
      expect((await graphql(other, {})).page!.meta.total).toBe(0);
    });
  });

  /** The Link header as {rel: url}. */
  function links(header: string | null): Record<string, string> {
    return Object.fromEntries(
      (header ?? '')
        .split(', ')
        .filter(Boolean)
        .map((part) => {
          const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part)!;
          return [rel!, url!];
        }),
    );
  }

  describe('lists whose shape the interface fixes stay arrays, bounded by page and limit', () => {
    let programId: string;
    let liveProgramId: string;
    const executions: string[] = [];

    beforeAll(async () => {
      ({ programId } = await activeCampaign(acme, 1));
      for (let i = 0; i < 3; i++) {
        const res = await acme.rest.post(`/api/programs/${programId}/executions`);
        expect(res.status).toBe(201);
        executions.unshift(res.body.id);
      }
      const contacts = [];
      for (const day of ['01', '02', '03']) contacts.push(await createContact(acme, { attributes: { birthday: `2050-01-${day}` } }));
      liveProgramId = await insertProgram(app, acme, { audienceId: await createAudience(acme, contacts) });
      await syncProgram(app, liveProgramId);
      for (let i = 0; i < 2; i++) expect((await acme.rest.post('/api/auth/api-keys', { name: `Key ${i}`, prefix: 'lst' })).status).toBe(201);
    });

    it('endpoint 9: executions as a JSON array, with X-Total-Count and Link; GraphQL takes the same page and limit', async () => {
      const all = await acme.rest.get(`/api/programs/${programId}/executions`);
      expect(ids(all.body)).toEqual(executions);
      expect(all.headers.get('x-total-count')).toBe('3');

      const res = await acme.rest.get(`/api/programs/${programId}/executions?page=2&limit=1`);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(ids(res.body)).toEqual([executions[1]]);
      expect(res.headers.get('x-total-count')).toBe('3');
      const path = `/api/programs/${programId}/executions`;
      expect(links(res.headers.get('link'))).toEqual({
        first: `${path}?page=1&limit=1`,
        last: `${path}?page=3&limit=1`,
        prev: `${path}?page=1&limit=1`,
        next: `${path}?page=3&limit=1`,
      });
      // Following next reaches the last row.
      const next = await acme.rest.get(links(res.headers.get('link')).next!);
      expect(ids(next.body)).toEqual([executions[2]]);
      expect(links(next.headers.get('link')).next).toBeUndefined();

      const { executions: page } = await acme.graphql.ok(ExecutionsDocument, { programId, page: 2, limit: 1 });
      expect(ids(page)).toEqual([executions[1]]);
    });

    it('endpoint 8: triggers as a JSON array, paged on both doors, the status filter kept in Link', async () => {
      const res = await acme.rest.get(`/api/programs/${liveProgramId}/triggers?status=pending&limit=2`);
      expect(res.status).toBe(200);
      expect(res.body.map((trigger: { attributeValue: string }) => trigger.attributeValue)).toEqual(['2050-01-01', '2050-01-02']);
      expect(res.headers.get('x-total-count')).toBe('3');
      expect(links(res.headers.get('link')).next).toBe(`/api/programs/${liveProgramId}/triggers?status=pending&page=2&limit=2`);

      const { triggers } = await acme.graphql.ok(TriggersDocument, { programId: liveProgramId, status: 'pending', page: 2, limit: 2 });
      expect(triggers.map((trigger) => trigger.attributeValue)).toEqual(['2050-01-03']);
    });

    it('endpoint 14: {apiKeys} stays the shape, paged with the same headers; GraphQL apiKeys(page, limit)', async () => {
      const all = await acme.rest.get('/api/auth/api-keys');
      expect(all.body.apiKeys).toHaveLength(3);
      const res = await acme.rest.get('/api/auth/api-keys?limit=2');
      expect(Object.keys(res.body)).toEqual(['apiKeys']);
      expect(ids(res.body.apiKeys)).toEqual(ids(all.body.apiKeys).slice(0, 2));
      expect(res.headers.get('x-total-count')).toBe('3');
      expect(links(res.headers.get('link'))).toMatchObject({ next: '/api/auth/api-keys?page=2&limit=2', last: '/api/auth/api-keys?page=2&limit=2' });
      expect(links(res.headers.get('link')).prev).toBeUndefined();

      const { apiKeys } = await acme.graphql.ok(ApiKeysDocument, { page: 2, limit: 2 });
      expect(ids(apiKeys)).toEqual(ids(all.body.apiKeys).slice(2));
    });

    it('lets a browser on an allowed origin read X-Total-Count and Link', async () => {
      const res = await fetch(`${app.baseUrl}/api/auth/api-keys?limit=1`, {
        headers: { origin: 'https://studio.apollographql.com', 'x-api-key': acme.apiKey },
      });
      expect(res.headers.get('access-control-allow-origin')).toBe('https://studio.apollographql.com');
      expect(res.headers.get('access-control-expose-headers')?.split(',')).toEqual(expect.arrayContaining(['X-Total-Count', 'Link', 'X-Next-Cursor']));
    });

    it('refuses a limit over 100 or a page of 0 with BAD_USER_INPUT on both doors', async () => {
      for (const path of [`/api/programs/${programId}/executions?limit=101`, `/api/programs/${liveProgramId}/triggers?page=0`, '/api/auth/api-keys?limit=0']) {
        const res = await acme.rest.get(path);
        expect([path, res.status, res.body.code]).toEqual([path, 400, 'BAD_USER_INPUT']);
      }
      for (const result of [
        await acme.graphql.run(ExecutionsDocument, { programId, limit: 101 }),
        await acme.graphql.run(TriggersDocument, { programId: liveProgramId, page: 0 }),
        await acme.graphql.run(ApiKeysDocument, { limit: 0 }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      }
    });

    it('answers another organization 404 for the program, on both doors, whatever the page', async () => {
      for (const path of [`/api/programs/${programId}/executions?page=2`, `/api/programs/${liveProgramId}/triggers?page=2`]) {
        expect((await other.rest.get(path)).status).toBe(404);
      }
      expect((await other.graphql.run(ExecutionsDocument, { programId, page: 2 })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      expect((await other.graphql.run(TriggersDocument, { programId: liveProgramId, page: 2 })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });
});

describe('response-size', () => {
  // An answer over RESPONSE_MAX_BYTES is refused with a clear 400 on both doors, never half-sent: early,
  // by the answer budget (large values are charged as they go into the answer, so the request stops before
  // its answer is built: "at least N bytes", N what was charged), or last, by the size of the serialized body.
  const LIMIT = 20_000;
  const TAIL = '; ask for fewer rows or fields';
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let kbId: string;
  let bigId: string;
  let midId: string;
  let smallId: string;

  const words = (chars: number) => 'word '.repeat(chars / 5);

  beforeAll(async () => {
    app = await startTestApp({ responseMaxBytes: LIMIT });
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    kbId = (await acme.rest.post('/api/knowledge-bases', { name: 'Help' })).body.id;
    bigId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Big', content: 'word' })).body.id;
    // Grown in place (with its stored size): its create's answer (which shows the content) would be over the limit too.
    await app.sql(`update knowledge_documents set content = repeat('word ', 6000), size_bytes = 30000 where id = ?`, [bigId]);
    midId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Mid', content: words(12_000) })).body.id;
    smallId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Small', content: 'A short one.' })).body.id;
  });
  afterAll(() => app.close());

  interface GraphQLAnswer {
    status: number;
    type: string | null;
    body: { data?: Record<string, any>; errors?: { message: string; extensions: { code: string } }[] };
  }

  async function graphql(query: string, variables: Record<string, unknown> = {}, apiKey = acme.apiKey): Promise<GraphQLAnswer> {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as GraphQLAnswer['body'] };
  }

  const document = (alias: string, id: string, fields = 'content') => `${alias}: document(knowledgeBaseId: "${kbId}", documentId: "${id}") { ${fields} }`;

  function expectRefused(answer: GraphQLAnswer, message: string): void {
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toHaveLength(1);
    expect(answer.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.body.errors?.[0]?.message).toBe(message);
  }

  describe('the answer budget', () => {
    it('refuses a large value on REST before the body is built: 400 in problem+json naming what was charged', async () => {
      const res = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${bigId}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.code).toBe('BAD_USER_INPUT');
      // The text's 30,000 bytes charged before it was read; the body would have been larger (its other fields, the JSON around them).
      expect(res.body.detail).toBe(`The answer would be at least 30000 bytes, over the limit of ${LIMIT}${TAIL}`);
      expect(Number(res.headers.get('content-length'))).toBeLessThan(1000);
    });

    it('refuses the same on GraphQL, with the same code and message and no partial data', async () => {
      const rest = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${bigId}`);
      const answer = await graphql(`{ ${document('big', bigId)} }`);
      expectRefused(answer, rest.body.detail);
      expect(answer.body.errors?.[0]?.extensions.code).toBe(rest.body.code);
    });

    it('charges a value once per place it takes in the answer: two aliases of one 12,000-byte text are over 20,000', async () => {
      expectRefused(
        await graphql(`{ ${document('a', midId)} ${document('b', midId)} }`),
        `The answer would be at least 24000 bytes, over the limit of ${LIMIT}${TAIL}`,
      );
    });

    it('leaves an answer within the limit alone on both doors (a field not asked for is not charged)', async () => {
      const answer = await graphql(`{ ${document('a', midId)} ${document('b', midId, 'title sizeBytes')} ${document('c', smallId)} }`);
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.a.content).toBe(words(12_000));
      expect(answer.body.data?.b).toEqual({ title: 'Mid', sizeBytes: 12_000 });
      expect(answer.body.data?.c.content).toBe('A short one.');
      // The large document without its text is small.
      const title = await graphql(`{ ${document('big', bigId, 'title')} }`);
      expect([title.status, title.body.data?.big]).toEqual([200, { title: 'Big' }]);
      const rest = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${midId}`);
      expect(rest.status).toBe(200);
      expect(rest.body.content).toBe(words(12_000));
    });

    it("charges a page of documents' texts on GraphQL", async () => {
      const page = (limit: number) => `{ knowledgeBase(id: "${kbId}") { documents(limit: ${limit}) { data { title content } } } }`;
      // Newest first: Small, Mid, Big (and the documents the tests below add come later).
      const small = await graphql(page(2));
      expect(small.status).toBe(200);
      expect(small.body.data?.knowledgeBase.documents.data.map((row: { title: string }) => row.title)).toEqual(['Small', 'Mid']);
      expectRefused(await graphql(page(3)), `The answer would be at least ${12 + 12_000 + 30_000} bytes, over the limit of ${LIMIT}${TAIL}`);
    });

    it('stops the operation: the mutations after the refusal do not run, nor the write whose answer passed the limit', async () => {
      const answer = await graphql(
        `mutation ($content: String!) {
          a: addDocument(knowledgeBaseId: "${kbId}", input: { title: "Budget A", content: $content }) { content }
          b: addDocument(knowledgeBaseId: "${kbId}", input: { title: "Budget B", content: $content }) { content }
          c: createKnowledgeBase(input: { name: "After the refusal" }) { id }
        }`,
        { content: words(12_000) },
      );
      expectRefused(answer, `The answer would be at least 24000 bytes, over the limit of ${LIMIT}${TAIL}`);
      expect(await app.sql(`select id from knowledge_bases where name = 'After the refusal'`)).toHaveLength(0);
      // What ran before the refusal stays done; b's text was charged before its write, so b wrote nothing.
      expect(await app.sql(`select title from knowledge_documents where title like 'Budget %' order by title`)).toEqual([{ title: 'Budget A' }]);
    });

    it("charges messages on both doors: a conversation's page over the limit is refused, a smaller page is not", async () => {
      const agent = await acme.rest.post('/api/agents', { name: 'Echo', instructions: 'Repeat.', modelConfig: { model: 'builtin/echo' } });
      const conversationId = (await acme.rest.post(`/api/agents/${agent.body.id}/conversations`)).body.id;
      for (let i = 0; i < 2; i++) {
        expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: `${i} ${words(6_000)}` })).status).toBe(200);
      }
      const rest = await acme.rest.get(`/api/conversations/${conversationId}/messages`);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(rest.body.detail).toMatch(new RegExp(`^The answer would be at least \\d+ bytes, over the limit of ${LIMIT}${TAIL}$`));
      const query = (limit: number) => `{ conversation(id: "${conversationId}") { messages(limit: ${limit}) { data { content } } } }`;
      const answer = await graphql(query(20));
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.extensions.code).toBe(rest.body.code);
      expect(answer.body.errors?.[0]?.message).toMatch(/^The answer would be at least \d+ bytes/);
      const small = await graphql(query(2));
      expect(small.status).toBe(200);
      expect(small.body.data?.conversation.messages.data).toHaveLength(2);
      expect((await acme.rest.get(`/api/conversations/${conversationId}/messages?limit=2`)).status).toBe(200);
    });

    it("answers another organization's request for the large document 404, not the budget's 400, on both doors", async () => {
      const rest = await other.rest.get(`/api/knowledge-bases/${kbId}/documents/${bigId}`);
      expect(rest.status).toBe(404);
      expect(rest.body.code).toBe('NOT_FOUND');
      const answer = await graphql(`{ ${document('big', bigId)} }`, {}, other.apiKey);
      expect(answer.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('the size of the serialized answer', () => {
    // Descriptions are bounded by their input (2,000 characters) and not charged: 11 of them pass the limit
    // only together, which the last check sees, naming the whole body's size. On REST the knowledge bases'
    // list is written by the database (src/rest/present-sql.ts), whose rows are charged as a whole, so the
    // REST door's last check is seen on the audiences' list, which the JS presenter still answers.
    let wordy: TestOrganization;
    beforeAll(async () => {
      wordy = await app.organization('Wordy');
      for (let i = 0; i < 11; i++) {
        expect((await wordy.rest.post('/api/knowledge-bases', { name: `Base ${i}`, description: words(2_000) })).status).toBe(201);
        expect((await wordy.rest.post('/api/audience', { name: `Audience ${i}`, description: words(2_000) })).status).toBe(201);
      }
    });

    it('refuses an answer over the limit that the budget did not see, on both doors, naming its size', async () => {
      const rest = await wordy.rest.get('/api/audience?limit=100');
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      const size = /^The answer would be (\d+) bytes, over the limit of 20000; ask for fewer rows or fields$/.exec(rest.body.detail)?.[1];
      expect(Number(size)).toBeGreaterThan(22_000);
      // The list the database writes is refused by the budget, before it is sent: its rows as a whole.
      const written = await wordy.rest.get('/api/knowledge-bases?limit=100');
      expect(written.status).toBe(400);
      expect(written.body.detail).toMatch(/^The answer would be at least 2\d{4} bytes, over the limit of 20000; ask for fewer rows or fields$/);
      // GraphQL: the executor's answer (audiences) is measured whole; the page the database writes (knowledge bases) is charged its rows.
      const answer = await graphql('{ audiences(limit: 100) { data { name description } } }', {}, wordy.apiKey);
      expect(answer.status).toBe(400);
      expect(answer.body.data).toBeUndefined();
      expect(answer.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(answer.body.errors?.[0]?.message).toMatch(/^The answer would be \d+ bytes, over the limit of 20000; ask for fewer rows or fields$/);
      const charged = await graphql('{ knowledgeBases(limit: 100) { data { name description } } }', {}, wordy.apiKey);
      expect(charged.status).toBe(400);
      expect(charged.body.data).toBeUndefined();
      expect(charged.body.errors?.[0]?.message).toMatch(/^The answer would be at least 2\d{4} bytes, over the limit of 20000; ask for fewer rows or fields$/);
      expect((await wordy.rest.get('/api/knowledge-bases?limit=5')).status).toBe(200);
    });
  });
});

describe('uppercase-ids', () => {
  // UUIDs are case-blind: every GET with ids answers the same with them in capitals. The paged lists of
  // a parent (a program's executions, …) once answered 500 when the parent's id came in capitals.
  let app: TestApp;
  let org: TestOrganization;
  let ids: Seeded;

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.organization('Shouty');
    ids = await seed(org, app);
  });
  afterAll(() => app?.close());

  const reads = REST_ROUTES.filter((route) => route.method === 'get' && paramsOf(route.path).length > 0 && !route.streams);

  it.each(reads.map((route) => [route.path, route] as const))('GET %s answers the same with its ids in capitals', async (_path, route) => {
    const path = (upper: boolean) =>
      paramsOf(route.path).reduce((text, param) => {
        const id = ids[resourceOfParam(route.path, param)];
        return text.replace(`{${param}}`, upper ? id.toUpperCase() : id);
      }, `/api${route.path}`);
    const lower = await org.rest.get(path(false));
    const upper = await org.rest.get(path(true));
    expect([upper.status, upper.body]).toEqual([lower.status, lower.body]);
    expect(upper.status).toBeLessThan(500);
  });
});

describe('media-types-and-methods', () => {
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  async function raw(method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array) {
    const res = await fetch(`${app.baseUrl}${path}`, { method, headers: { 'x-api-key': acme.apiKey, ...headers }, body });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  }

  describe('a body that is not JSON', () => {
    const json = JSON.stringify(agentInput());

    it.each([
      ['text/plain', json, /got text\/plain/],
      ['application/x-www-form-urlencoded', 'name=Agent&instructions=Help', /got application\/x-www-form-urlencoded/],
      ['multipart/form-data; boundary=x', '--x--', /got multipart\/form-data/],
    ])('sent as %s answers 415 UNSUPPORTED_MEDIA_TYPE saying what to send', async (type, body, got) => {
      const res = await raw('POST', '/api/agents', { 'content-type': type }, body);
      expect(res.status).toBe(415);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, title: 'Unsupported Media Type' });
      expect(res.body.detail).toMatch(/content-type: application\/json/);
      expect(res.body.detail).toMatch(got);
    });

    it('sent with no content-type at all answers 415 too, not "name must be a string"', async () => {
      const res = await raw('POST', '/api/agents', {}, new TextEncoder().encode(json));
      expect(res.status).toBe(415);
      expect(res.body.detail).toMatch(/no content-type was sent/);
      // a PUT with a body is held to the same rule
      const key = await acme.rest.post('/api/auth/api-keys', { name: 'k', prefix: 'k_' });
      expect((await raw('PUT', `/api/auth/api-keys/${key.body.id}`, { 'content-type': 'text/plain' }, '{"name":"x"}')).status).toBe(415);
    });

    it('the same body as application/json (with a charset) is accepted', async () => {
      const res = await raw('POST', '/api/agents', { 'content-type': 'application/json; charset=utf-8' }, json);
      expect(res.status).toBe(201);
    });

    it('an empty body without content-type on a route whose body is optional stays accepted', async () => {
      const agent = await acme.rest.post('/api/agents', agentInput());
      const res = await raw('POST', `/api/agents/${agent.body.id}/conversations`, {});
      expect(res.status).toBe(201);
      // and a route that reads no body ignores one
      expect((await raw('POST', '/api/auth/token', { 'content-type': 'text/plain' }, 'hello')).status).toBe(200);
    });

    it('OpenAPI lists 415 on every route that takes a body, and only there', async () => {
      const { body: doc } = await app.rest().get('/api/openapi.json');
      for (const route of REST_ROUTES) {
        const responses = doc.paths[`/api${route.path}`][route.method].responses;
        // A raw body (a CSV upload) is refused with 415 like a JSON one, naming its own media type.
        const taken = route.body ? 'application/json' : route.rawBody?.mediaType;
        expect([route.operationId, Boolean(responses['415'])]).toEqual([route.operationId, Boolean(taken)]);
        if (!taken) continue;
        const requestBody = doc.paths[`/api${route.path}`][route.method].requestBody;
        expect([route.operationId, Object.keys(requestBody.content)]).toEqual([route.operationId, [taken]]);
        expect([route.operationId, responses['415'].description]).toEqual([route.operationId, `Unsupported Media Type: the body is not ${taken}`]);
      }
    });

    it('a CSV import sent as JSON answers the 415 its OpenAPI documents', async () => {
      const res = await raw('POST', '/api/imports', { 'content-type': 'application/json' }, '{"phone":"+14155550100"}');
      expect([res.status, res.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(res.body.detail).toBe('Send the body as text/csv (got application/json)');
    });
  });

  describe('a method a known path does not take', () => {
    it('answers 405 METHOD_NOT_ALLOWED with an Allow header listing the methods of that path', async () => {
      const agent = await acme.rest.post('/api/agents', agentInput());
      const res = await raw('PATCH', `/api/agents/${agent.body.id}`, { 'content-type': 'application/json' }, '{}');
      expect(res.status).toBe(405);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405, title: 'Method Not Allowed' });
      expect(res.body.detail).toMatch(/^\/api\/agents\/[^ ]+ does not take PATCH; it takes /);
      const listed = res.headers.get('allow')!.split(', ');
      expect(listed).toContain('GET');
      expect(listed).toContain('DELETE');
      // what Allow lists is really served there
      expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).status).toBe(200);
    });

    it('for every path of the route table, Allow lists its declared methods, and it is true: listed ones are served, others are 405', async () => {
      const byPath = new Map<string, Set<string>>();
      for (const route of REST_ROUTES) byPath.set(route.path, (byPath.get(route.path) ?? new Set<string>()).add(route.method.toUpperCase()));
      for (const [path, declared] of byPath) {
        const concrete = `/api${path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}`;
        const unused = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find((method) => !declared.has(method))!;
        const refused = await acme.rest.request(unused, concrete);
        expect([path, unused, refused.status, refused.body.code]).toEqual([path, unused, 405, 'METHOD_NOT_ALLOWED']);
        const allow = new Set(refused.headers.get('allow')!.split(', '));
        for (const method of declared) expect([path, method, allow.has(method)]).toEqual([path, method, true]);
        if (declared.has('GET')) expect(allow.has('HEAD')).toBe(true);
        // /contacts/import also matches /contacts/{id}: Allow is what Express really serves on the URL
        for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
          const res = await acme.rest.request(method, concrete);
          expect([path, method, res.status === 405]).toEqual([path, method, !allow.has(method)]);
          expect(res.body?.detail ?? '').not.toMatch(/^No route/);
        }
      }
    });

    it('a path is matched regardless of case, as Express matches it: /api/Agents is the agents list', async () => {
      const [lower, mixed] = await Promise.all([acme.rest.get('/api/agents?limit=1'), acme.rest.get('/api/Agents?limit=1')]);
      expect(mixed.status).toBe(200);
      expect(mixed.body).toEqual(lower.body);
    });

    it('an unknown path is still 404 NOT_FOUND, without Allow', async () => {
      const res = await acme.rest.request('PATCH', '/api/nothing-here');
      expect([res.status, res.body.code, res.headers.get('allow')]).toEqual([404, 'NOT_FOUND', null]);
    });
  });
});

describe('client-input', () => {
  // Input that used to answer 500 (issue 9, finding 10): each class answers 400 BAD_USER_INPUT, on both doors.

  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  const agentJson = (extra: string) =>
    `{"name":"A","instructions":"I","modelConfig":{"model":"builtin/echo"${extra.startsWith(',"providerOptions"') ? extra : ''}}${extra.startsWith(',"providerOptions"') ? '' : extra}}`;
  const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const fields = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();

  async function graphqlRaw(body: string, headers: Record<string, string> = { 'x-api-key': acme.apiKey }, target: TestApp = app) {
    const res = await fetch(`${target.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const text = await res.text();
    return {
      status: res.status,
      text,
      body: JSON.parse(text) as { errors?: { message: string; extensions: { code: string; errors?: { field: string }[] } }[] },
    };
  }

  const CREATE_AGENT = 'mutation Create($input: CreateAgentInput!) { createAgent(input: $input) { id } }';

  describe('arguments found valid once are remembered, and nothing else is', () => {
    // validateInstance keeps small argument sets that passed; each case below follows a pass of nearly
    // the same arguments and must still be refused, the same on both doors.
    it('a pass does not let through an unknown key, another type or a value out of range', async () => {
      expect((await acme.rest.get('/api/agents?limit=20')).status).toBe(200);
      expect((await acme.rest.get('/api/agents?limit=20')).status).toBe(200);
      const unknown = await acme.rest.get('/api/agents?limit=20&bogus=1');
      expect(unknown.status).toBe(400);
      expect(fields(unknown.body.errors)).toEqual(['bogus']);
      for (let i = 0; i < 2; i++) {
        const tooMany = await acme.rest.get('/api/agents?limit=101');
        expect(tooMany.status).toBe(400);
        expect(fields(tooMany.body.errors)).toEqual(['limit']);
      }
      const page = 'query($limit: Int, $inner: Int) { agents(limit: $limit) { data { id conversations(limit: $inner) { data { id } } } } }';
      await acme.rest.post('/api/agents', agentInput());
      const ok = await graphqlRaw(JSON.stringify({ query: page, variables: { limit: 20, inner: 5 } }));
      expect(ok.body.errors).toBeUndefined();
      for (const variables of [
        { limit: 101, inner: 5 },
        { limit: 20, inner: 101 },
      ]) {
        const refused = await graphqlRaw(JSON.stringify({ query: page, variables }));
        expect(refused.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
        expect(fields(refused.body.errors?.[0]?.extensions.errors)).toEqual(['limit']);
      }
    });
  });

  describe('object internals as keys inside free-form JSON', () => {
    it.each([
      ['metadata', ',"metadata":{"constructor":{"x":1}}', 'metadata.constructor'],
      ['deeper in metadata', ',"metadata":{"a":{"b":{"constructor":1}}}', 'metadata.a.b.constructor'],
      ['metadata.__proto__', ',"metadata":{"__proto__":{"x":1}}', 'metadata.__proto__'],
      ['modelConfig.providerOptions', ',"providerOptions":{"prototype":{"x":1}}', 'modelConfig.providerOptions.prototype'],
    ])('%s → 400 naming the key on both doors', async (_label, extra, field) => {
      const raw = agentJson(extra);
      const rest = await acme.rest.request('POST', '/api/agents', undefined, raw);
      expect([rest.status, rest.body.code, fields(rest.body.errors)]).toEqual([400, 'BAD_USER_INPUT', [field]]);
      expect(rest.body.errors[0].message).toMatch(/is not allowed/);
      const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
      expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fields(gql.body.errors?.[0]?.extensions.errors)).toEqual([field]);
    });

    it('a contact attribute named constructor → 400 on both doors, and nothing is written', async () => {
      const rest = await acme.rest.request('POST', '/api/contacts', undefined, '{"phone":"+15550001111","attributes":{"constructor":{"a":1}}}');
      expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['attributes.constructor']]);
      const gql = await acme.graphql.run(CreateContactDocument, { input: { phone: '+15550001111', attributes: JSON.parse('{"constructor":{"a":1}}') } });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fields(gql.errors?.[0]?.extensions.errors)).toEqual(['attributes.constructor']);
      expect((await acme.rest.get('/api/contacts')).body.meta.total).toBe(0);
    });
  });

  describe('deep nesting', () => {
    it.each([
      ['arrays 10,000 deep', nestedArrays(10_000)],
      ['objects 10,000 deep', nestedObjects(10_000)],
      [`objects ${MAX_INPUT_DEPTH} deep`, nestedObjects(MAX_INPUT_DEPTH)],
    ])('JSON %s in metadata → 400 on both doors', async (_label, deep) => {
      const raw = agentJson(`,"metadata":{"a":${deep}}`);
      const rest = await acme.rest.request('POST', '/api/agents', undefined, raw);
      expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(rest.body.detail).toMatch(new RegExp(`nested more than ${MAX_INPUT_DEPTH} levels deep`));
      const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
      expect(gql.status).toBe(200);
      expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(gql.body.errors?.[0]?.message).toBe(rest.body.detail);
    });

    it('metadata nested just within the limit is kept', async () => {
      const raw = agentJson(`,"metadata":${nestedObjects(MAX_INPUT_DEPTH - 2)}`);
      expect((await acme.rest.request('POST', '/api/agents', undefined, raw)).status).toBe(201);
      const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
      expect(gql.body.errors).toBeUndefined();
    });

    it('a GraphQL literal nested 3,000 deep → 400 BAD_USER_INPUT, not a stack overflow', async () => {
      for (const query of [
        `{ agents(search: ${nestedArrays(3000)}) { meta { total } } }`,
        `mutation { createAgent(input: {name: "a", instructions: "i", modelConfig: {model: "builtin/echo"}, metadata: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}}) { id } }`,
      ]) {
        const gql = await graphqlRaw(JSON.stringify({ query }));
        expect(gql.status).toBe(400);
        expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
        expect(gql.text).not.toMatch(/RangeError|call stack/);
      }
    });

    it('a literal nested past the input depth but within the token limit → 400 as on REST', async () => {
      const query = `mutation { createAgent(input: {name: "a", instructions: "i", modelConfig: {model: "builtin/echo"}, metadata: {a: ${'{a: '.repeat(40)}1${'}'.repeat(40)}}}) { id } }`;
      const gql = await graphqlRaw(JSON.stringify({ query }));
      expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(gql.body.errors?.[0]?.message).toMatch(/nested more than/);
    });
  });

  describe('GraphQL syntax errors', () => {
    it.each([
      ['development', 'development'],
      ['production', 'production'],
    ])('in %s → 400 BAD_USER_INPUT with the parser message', async (_label, nodeEnv) => {
      const target = nodeEnv === 'production' ? await startTestApp({ nodeEnv }) : app;
      try {
        const org = target === app ? acme : await target.organization('Prod');
        for (const query of ['{ me { ', '{ me } }', 'query (', '"""']) {
          const gql = await graphqlRaw(JSON.stringify({ query }), { 'x-api-key': org.apiKey }, target);
          expect([gql.status, gql.body.errors?.[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
          expect(gql.body.errors?.[0]?.message).toMatch(/^Syntax Error/);
        }
        // More tokens than GRAPHQL_MAX_TOKENS is refused by the parser, with the same code.
        const many = await graphqlRaw(JSON.stringify({ query: `{ ${'__typename '.repeat(6000)} }` }), { 'x-api-key': org.apiKey }, target);
        expect([many.status, many.body.errors?.[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
        expect(many.body.errors?.[0]?.message).toMatch(/tokens/);
      } finally {
        if (target !== app) await target.close();
      }
    });
  });

  describe('a value longer than its column', () => {
    it('a 3,000-character path id with an Idempotency-Key → 400, not 500', async () => {
      const res = await acme.rest.with({ 'Idempotency-Key': 'long-path' }).request('POST', `/api/agents/${'a'.repeat(3000)}/conversations`);
      expect([res.status, res.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(res.body.detail).toMatch(/longer than can be stored/);
    });
  });
});

describe('hostile-input', () => {
  // Input no reasonable client sends, which must still get a clear 400 (never a 500) on both doors.

  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  const fields = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();
  const agent = (overrides: Record<string, unknown>) => ({ name: 'A', instructions: 'I', modelConfig: { model: 'builtin/echo' }, ...overrides });

  async function rawGraphql(query: string) {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query }),
    });
    return (await res.json()) as { errors?: { extensions: { code: string; errors?: { field: string }[] } }[] };
  }

  it.each([
    ['a NUL in a text field', agent({ name: 'a\u0000b' }), ['name']],
    ['a NUL inside free-form metadata', agent({ metadata: { note: { deep: 'x\u0000' } } }), ['metadata.note.deep']],
    ['an unpaired surrogate', agent({ modelConfig: { model: 'builtin/\ud800' } }), ['modelConfig.model']],
    ['a NUL in a key of free-form metadata', agent({ metadata: { 'a\u0000': 1 } }), ['metadata.a\u0000']],
  ])('%s → 400 naming the field on both doors', async (_label, input, expected) => {
    const rest = await acme.rest.post('/api/agents', input);
    expect(rest.status).toBe(400);
    expect(fields(rest.body.errors)).toEqual(expected);
    const gqlResult = await acme.graphql.run(CreateAgentDocument, { input: input as never });
    expect(gqlResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(gqlResult.errors?.[0]?.extensions.errors)).toEqual(expected);
  });

  it('a page far past any list → 400 naming page on both doors', async () => {
    for (const page of ['1e300', '2147483648', '1000001']) {
      const rest = await acme.rest.get(`/api/agents?page=${page}`);
      expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['page']]);
    }
    expect((await acme.rest.get('/api/agents?page=1000000')).status).toBe(200);
    const result = await rawGraphql('{ agents(page: 1000001) { meta { total } } }');
    expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(result.errors?.[0]?.extensions.errors)).toEqual(['page']);
  });

  it('literals of the wrong type or unknown enum values are BAD_USER_INPUT on GraphQL, as on REST', async () => {
    const rest = await acme.rest.get('/api/agents?status=deleted');
    expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['status']]);
    const enumResult = await rawGraphql('{ agents(status: deleted) { meta { total } } }');
    expect(enumResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(enumResult.errors?.[0]?.extensions.errors)).toEqual(['status']);
    const typeResult = await rawGraphql(gql`
      mutation {
        testAgent(id: "x", message: 5) {
          response
        }
      }
    `);
    expect(typeResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(typeResult.errors?.[0]?.extensions.errors)).toEqual(['message']);
    const missing = await rawGraphql('mutation { createAgent(input: { name: "x", modelConfig: { model: "builtin/echo" } }) { id } }');
    expect(missing.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(missing.errors?.[0]?.extensions.errors)).toEqual(['instructions']);
  });

  it('object internals are no fields: constructor, __proto__ and prototype are refused', async () => {
    for (const key of ['constructor', '__proto__', 'prototype']) {
      const res = await acme.rest.request(
        'POST',
        '/api/agents',
        undefined,
        `{"name":"A","instructions":"I","modelConfig":{"model":"builtin/echo"},"${key}":{"x":1}}`,
      );
      expect([res.status, fields(res.body.errors)]).toEqual([400, [key]]);
    }
  });

  it('a path that is not valid percent-encoding → 400, not 500', async () => {
    const res = await acme.rest.get('/api/agents/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_USER_INPUT');
  });

  it('a logged database error carries neither its statement nor its values', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const error = Object.assign(new Error('insert failed'), {
      query: "insert into agents (policy) values ('POLICY-SECRET')",
      params: ['POLICY-SECRET'],
      cause: Object.assign(new Error('driver'), { detail: 'Key (policy)=(POLICY-SECRET) exists', where: 'POLICY-SECRET' }),
    });
    logger.error({ err: error }, 'request failed');
    expect(lines.join('')).toContain('insert failed');
    expect(lines.join('')).not.toContain('POLICY-SECRET');
  });

  describe('GraphQL limits', () => {
    it('a query deeper than the limit, or with too many aliases, is refused before it runs', async () => {
      const deep = await rawGraphql(
        '{ agents { data { conversations { data { agent { conversations { data { agent { conversations { data { agent { id } } } } } } } } } } } }',
      );
      expect(deep.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(JSON.stringify(deep)).toMatch(/depth/i);
      const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: me { id }`).join(' ');
      const many = await rawGraphql(`{ ${aliases} }`);
      expect(many.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      const fine = await rawGraphql('{ agents(limit: 5) { data { id conversations(limit: 5) { data { id agent { name } } } } } }');
      expect(fine.errors).toBeUndefined();
    });

    it('Sandbox introspection (a deep query) is not counted against the depth limit', async () => {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: getIntrospectionQuery() }),
      });
      const body = (await res.json()) as { data?: { __schema: unknown }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.data?.__schema).toBeDefined();
    });
  });
});
