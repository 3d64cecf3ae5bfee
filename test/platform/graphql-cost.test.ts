import { parse } from 'graphql';
import { gatewaySchema } from '../../src/doors.js';
import { operationCost, SEARCH_COST } from '../../src/graphql/cost.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';

// The cost of an operation multiplies each list's selection by the rows it may answer, so a
// small query cannot ask for millions of rows; a search costs far more than a column.
let app: TestApp;
let acme: TestOrganization;
let agentId: string;
let knowledgeBaseId: string;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  const agent = await acme.rest.post('/api/agents', { name: 'A', instructions: 'I', modelConfig: { model: 'builtin/echo' } });
  agentId = agent.body.id;
  for (let i = 0; i < 3; i++) expect((await acme.rest.post(`/api/agents/${agentId}/conversations`)).status).toBe(201);
  const base = await acme.rest.post('/api/knowledge-bases', { name: 'Help' });
  knowledgeBaseId = base.body.id;
  await acme.rest.post(`/api/knowledge-bases/${knowledgeBaseId}/documents`, { title: 'Hours', content: 'We open at nine and close at six.' });
});
afterAll(() => app.close());

async function post(query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: { code: string } }[] } };
}

/** The shape of the review's 64 MB answer: conversations → agent → conversations → agent → conversations. */
const nested = (outer: string, inner: string) =>
  `query Nested($agentId: ID!) { conversations(agentId: $agentId, ${outer}) { data { agent { conversations${inner} { data { agent { conversations${inner} { data { id } } } } } } } } }`;

describe('the cost of an operation', () => {
  it('multiplies a selection by the limit of its list, inner lists at their default of 20', async () => {
    const statements = await recordStatements(app, async () => {
      const refused = await post(nested('limit: 100', ''), { agentId });
      expect(refused.status).toBe(400);
      expect(refused.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(refused.body.errors?.[0]?.message).toMatch(/would cost \d+, over the limit of 10000/);
      expect(refused.body.data).toBeUndefined();
    });
    // Refused before any resolver ran: no statement (the key lookup is not counted).
    expect(statements).toHaveLength(0);

    const small = await post(nested('limit: 2', '(limit: 2)'), { agentId });
    expect(small.body.errors).toBeUndefined();
    expect(small.status).toBe(200);
  });

  it('reads the limit from variables', async () => {
    const query = 'query Page($agentId: ID!, $limit: Int) { conversations(agentId: $agentId, limit: $limit) { data { agent { conversations(limit: 100) { data { id title status } } } } } }';
    expect((await post(query, { agentId, limit: 2 })).body.errors).toBeUndefined();
    const refused = await post(query, { agentId, limit: 100 });
    expect(refused.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('counts a search as much more than a field: one passes, many aliased are refused', async () => {
    const search = (alias: string) => `${alias}: searchKnowledgeBase(id: "${knowledgeBaseId}", query: "when do you open") { content score }`;
    const one = await post(`{ ${search('a')} }`);
    expect(one.body.errors).toBeUndefined();
    const many = await post(`{ ${Array.from({ length: 15 }, (_, i) => search(`s${i}`)).join(' ')} }`);
    expect(many.status).toBe(400);
    expect(many.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('is computed as documented', async () => {
    const schema = await gatewaySchema();
    const cost = (query: string, variables = {}) => operationCost(schema, parse(query), variables);
    // agents: 1 + limit × (data: 1 + id 1)
    expect(cost('{ agents(limit: 3) { data { id } } }')).toBe(1 + 3 * 2);
    expect(cost('{ agents { data { id } } }')).toBe(1 + 20 * 2);
    expect(cost('query Q($n: Int) { agents(limit: $n) { data { id } } }', { n: 7 })).toBe(1 + 7 * 2);
    // a bounded array (apiKeys, executions, triggers) counts its limit, 20 when omitted; a search its base plus topK passages
    expect(cost('{ apiKeys { id name } }')).toBe(1 + 20 * 2);
    expect(cost('{ apiKeys(limit: 5) { id name } }')).toBe(1 + 5 * 2);
    expect(cost(`{ searchKnowledgeBase(id: "${knowledgeBaseId}", query: "x", topK: 4) { content score } }`)).toBe(SEARCH_COST + 4 * 2);
    expect(cost('{ __schema { types { name fields { name } } } }')).toBe(0);
  });
});
