import {
  ApiKeysDocument,
  CallFlowsDocument,
  ExecutionsDocument,
  KnowledgeBasesDocument,
  TeamsDocument,
  TriggersDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { activeCampaign, flowInput } from '../programs/fixtures.js';
import { createAudience, createContact, insertProgram, syncProgram } from '../triggers/fixtures.js';

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
    expect(first.body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
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
    (header ?? '').split(', ').filter(Boolean).map((part) => {
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
    expect(res.headers.get('access-control-expose-headers')?.split(',')).toEqual(expect.arrayContaining(['X-Total-Count', 'Link']));
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
