import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// An answer over RESPONSE_MAX_BYTES is replaced by a clear 400 on both doors, never half-sent.
const LIMIT = 20_000;
let app: TestApp;
let acme: TestOrganization;
let kbId: string;
let bigId: string;
let smallId: string;

beforeAll(async () => {
  app = await startTestApp({ responseMaxBytes: LIMIT });
  acme = await app.organization('Acme');
  kbId = (await acme.rest.post('/api/knowledge-bases', { name: 'Help' })).body.id;
  bigId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Big', content: 'word' })).body.id;
  // Grown in place: its create's answer (which shows the content) would be over the limit too.
  await app.sql(`update knowledge_documents set content = repeat('word ', 6000) where id = ?`, [bigId]);
  smallId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Small', content: 'A short one.' })).body.id;
});
afterAll(() => app.close());

async function graphql(query: string) {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: { code: string } }[] } };
}

describe('the response size limit', () => {
  it('answers 400 BAD_USER_INPUT naming the size on REST, in problem+json', async () => {
    const res = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${bigId}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.code).toBe('BAD_USER_INPUT');
    expect(res.body.detail).toMatch(new RegExp(`^The answer would be \\d+ bytes, over the limit of ${LIMIT}; ask for fewer rows or fields$`));
    expect(Number(res.headers.get('content-length'))).toBeLessThan(1000);
    expect((await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${smallId}`)).status).toBe(200);
  });

  it('answers the same on GraphQL, with no partial data', async () => {
    const big = await graphql(`{ document(knowledgeBaseId: "${kbId}", documentId: "${bigId}") { content } }`);
    expect(big.status).toBe(400);
    expect(big.body.data).toBeUndefined();
    expect(big.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(big.body.errors?.[0]?.message).toMatch(/over the limit of 20000; ask for fewer rows or fields/);
    const small = await graphql(`{ document(knowledgeBaseId: "${kbId}", documentId: "${smallId}") { content } }`);
    expect(small.status).toBe(200);
    expect(small.body.errors).toBeUndefined();
  });
});
