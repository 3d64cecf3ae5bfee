import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
  // only together, which the last check sees, naming the whole body's size.
  let wordy: TestOrganization;
  beforeAll(async () => {
    wordy = await app.organization('Wordy');
    for (let i = 0; i < 11; i++) {
      expect((await wordy.rest.post('/api/knowledge-bases', { name: `Base ${i}`, description: words(2_000) })).status).toBe(201);
    }
  });

  it('refuses an answer over the limit that the budget did not see, on both doors, naming its size', async () => {
    const rest = await wordy.rest.get('/api/knowledge-bases?limit=100');
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    const size = /^The answer would be (\d+) bytes, over the limit of 20000; ask for fewer rows or fields$/.exec(rest.body.detail)?.[1];
    expect(Number(size)).toBeGreaterThan(22_000);
    const answer = await graphql('{ knowledgeBases(limit: 100) { data { name description } } }', {}, wordy.apiKey);
    expect(answer.status).toBe(400);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.body.errors?.[0]?.message).toMatch(/^The answer would be \d+ bytes, over the limit of 20000; ask for fewer rows or fields$/);
    expect((await wordy.rest.get('/api/knowledge-bases?limit=5')).status).toBe(200);
  });
});
