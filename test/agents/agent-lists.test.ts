import { AgentsDocument, DeleteAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { agentInput, graphqlCode, graphqlFields, restFields } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  const other = await app.organization('Other');
  await other.rest.post('/api/agents', agentInput({ name: 'Alpha of another org' }));
  for (const [name, description] of [
    ['Alpha support', 'first line'],
    ['Beta sales', 'handles 100% of refunds'],
    ['Gamma_ops', null],
    ['Delta', 'Support for partners'],
    ['Epsilon', 'archived soon'],
  ] as const) {
    const res = await acme.rest.post('/api/agents', agentInput({ name, description }));
    ids[name] = res.body.id;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await acme.graphql.ok(DeleteAgentDocument, { id: ids.Epsilon! });
});
afterAll(() => app.close());

const names = (body: { data: { name: string }[] }) => body.data.map((agent) => agent.name);

describe('the agent list', () => {
  it('leaves archived agents out by default, and lists them with status=archived', async () => {
    const all = await acme.rest.get('/api/agents');
    expect(all.status).toBe(200);
    expect(names(all.body)).toEqual(['Delta', 'Gamma_ops', 'Beta sales', 'Alpha support']);
    expect(all.body.meta).toEqual({ page: 1, limit: 20, total: 4, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const archived = await acme.rest.get('/api/agents?status=archived');
    expect(names(archived.body)).toEqual(['Epsilon']);
    const { agents } = await acme.graphql.ok(AgentsDocument, { status: 'archived' });
    expect(agents.data.map((agent) => [agent.name, agent.status])).toEqual([['Epsilon', 'archived']]);
    const drafts = await acme.rest.get('/api/agents?status=draft');
    expect(drafts.body.meta.total).toBe(4);
  });

  it('pages with correct meta on both doors', async () => {
    const first = await acme.rest.get('/api/agents?page=1&limit=3&sortBy=name&sortOrder=asc');
    expect(names(first.body)).toEqual(['Alpha support', 'Beta sales', 'Delta']);
    expect(first.body.meta).toEqual({ page: 1, limit: 3, total: 4, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const { agents } = await acme.graphql.ok(AgentsDocument, { page: 2, limit: 3, sortBy: 'name', sortOrder: 'asc' });
    expect(agents.data.map((agent) => agent.name)).toEqual(['Gamma_ops']);
    expect(agents.meta).toEqual({ page: 2, limit: 3, total: 4, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    const beyond = await acme.rest.get('/api/agents?page=5&limit=3');
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toMatchObject({ page: 5, total: 4, hasNextPage: false, hasPreviousPage: true });
  });

  it('searches name and description case-insensitively, with % and _ taken literally', async () => {
    expect(names((await acme.rest.get('/api/agents?search=SUPPORT&sortBy=name&sortOrder=asc')).body)).toEqual(['Alpha support', 'Delta']);
    expect(names((await acme.rest.get(`/api/agents?search=${encodeURIComponent('100%')}`)).body)).toEqual(['Beta sales']);
    expect(names((await acme.rest.get('/api/agents?search=_')).body)).toEqual(['Gamma_ops']);
    expect(names((await acme.rest.get('/api/agents?search=%25')).body)).toEqual(['Beta sales']);
    const { agents } = await acme.graphql.ok(AgentsDocument, { search: 'first LINE' });
    expect(agents.data.map((agent) => agent.name)).toEqual(['Alpha support']);
  });

  it('sorts by an allowed field in either order, and refuses other fields naming sortBy', async () => {
    expect(names((await acme.rest.get('/api/agents?sortBy=name&sortOrder=desc')).body)).toEqual(['Gamma_ops', 'Delta', 'Beta sales', 'Alpha support']);
    expect(names((await acme.rest.get('/api/agents?sortBy=createdAt&sortOrder=asc')).body)).toEqual(['Alpha support', 'Beta sales', 'Gamma_ops', 'Delta']);
    for (const sortBy of ['policy', 'instructions', 'nope']) {
      expect(restFields(await acme.rest.get(`/api/agents?sortBy=${sortBy}`))).toEqual(['sortBy']);
      expect(graphqlFields(await acme.graphql.run(AgentsDocument, { sortBy }))).toEqual(['sortBy']);
    }
  });

  it('refuses bad page, limit, sortOrder, status and search on both doors', async () => {
    for (const [query, field] of [
      ['page=0', 'page'],
      ['page=abc', 'page'],
      ['page=1.5', 'page'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['sortOrder=up', 'sortOrder'],
      ['status=deleted', 'status'],
      [`search=${'s'.repeat(101)}`, 'search'],
      ['color=red', 'color'],
    ] as const) {
      expect([query, restFields(await acme.rest.get(`/api/agents?${query}`))]).toEqual([query, [field]]);
    }
    expect((await acme.rest.get('/api/agents?limit=100')).status).toBe(200);
    expect(graphqlFields(await acme.graphql.run(AgentsDocument, { page: 0 }))).toEqual(['page']);
    expect(graphqlFields(await acme.graphql.run(AgentsDocument, { limit: 101 }))).toEqual(['limit']);
    expect(graphqlFields(await acme.graphql.run(AgentsDocument, { limit: 0 }))).toEqual(['limit']);
    expect(graphqlFields(await acme.graphql.run(AgentsDocument, { search: 's'.repeat(101) }))).toEqual(['search']);
    expect(graphqlCode(await acme.graphql.run(AgentsDocument, { page: 'abc' as never }))).toBe('BAD_USER_INPUT');
    expect(graphqlCode(await acme.graphql.run(AgentsDocument, { status: 'deleted' as never }))).toBe('BAD_USER_INPUT');
    expect(graphqlCode(await acme.graphql.run(AgentsDocument, { sortOrder: 'up' as never }))).toBe('BAD_USER_INPUT');
  });
});
