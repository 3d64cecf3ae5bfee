import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// An OpenAI-compatible upstream that holds every completion until the test lets it go, so a
// request stays in flight for as long as the test wants.
const held: ServerResponse[] = [];
let upstreamCalls = 0;
function completion(_req: IncomingMessage, res: ServerResponse) {
  upstreamCalls++;
  held.push(res);
}
function releaseAll() {
  for (const res of held.splice(0)) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model: 'slow',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  }
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(condition()).toBe(true);
};

let upstream: Server;
let app: TestApp;
let acme: TestOrganization;
let globex: TestOrganization;
let agentId: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => completion(req, res));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const openaiCompatibleBaseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  app = await startTestApp({ concurrencyPerOrganization: 2, providers: { openaiCompatibleBaseUrl } });
  acme = await app.organization('Acme');
  globex = await app.organization('Globex');
  const created = await acme.rest.post('/api/agents', { name: 'Slow', instructions: 'Wait.', modelConfig: { model: 'openai-compatible/slow' } });
  agentId = created.body.id;
});
afterAll(async () => {
  releaseAll();
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

it('runs at most CONCURRENCY_PER_ORG requests of one organization at once, on both doors together; the rest wait their turn', async () => {
  upstreamCalls = 0;
  // Three at once, two through REST and one through GraphQL: which two get the places first is the gate's arrival order.
  const rest = [1, 2].map((n) => acme.rest.post(`/api/agents/${agentId}/test`, { message: `rest ${n}` }));
  const graphql = acme.graphql.run(TestAgentDocument, { id: agentId, message: 'graphql 3' });
  await until(() => upstreamCalls === 2);
  // The third waits at the gate: it has not reached the model.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(upstreamCalls).toBe(2);

  // Another organization is not held up by Acme's queue.
  const other = await globex.rest.get('/api/users/me');
  expect(other.status).toBe(200);

  // When one of the first two is answered, the third gets its place.
  releaseAll();
  await until(() => upstreamCalls === 3);
  releaseAll();
  const answers = await Promise.all(rest);
  expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
  const third = await graphql;
  expect(third.errors).toBeUndefined();
  expect(third.data?.testAgent.response).toBe('Done.');
});

it('is off with 0', async () => {
  const open = await startTestApp({ concurrencyPerOrganization: 0, providers: { openaiCompatibleBaseUrl: app.config.providers.openaiCompatibleBaseUrl } });
  try {
    const org = await open.organization('Open');
    const created = await org.rest.post('/api/agents', { name: 'Slow', instructions: 'Wait.', modelConfig: { model: 'openai-compatible/slow' } });
    upstreamCalls = 0;
    const pending = [1, 2, 3, 4].map((n) => org.rest.post(`/api/agents/${created.body.id}/test`, { message: `m ${n}` }));
    await until(() => upstreamCalls === 4);
    releaseAll();
    expect((await Promise.all(pending)).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  } finally {
    await open.close();
  }
});

it('starts a request that waited as itself, not as the request whose leaving let it in', async () => {
  // One place; a slow request holds it while a request over its answer budget and two small ones queue
  // behind it, in that order. The refused request's abort signal and spent budget must not reach the
  // requests its leaving lets in (they answered 500 and 400 when they ran in its async context).
  const gated = await startTestApp({
    concurrencyPerOrganization: 1,
    responseMaxBytes: 20_000,
    providers: { openaiCompatibleBaseUrl: app.config.providers.openaiCompatibleBaseUrl },
  });
  try {
    const org = await gated.organization('Gated');
    const slow = await org.rest.post('/api/agents', { name: 'Slow', instructions: 'Wait.', modelConfig: { model: 'openai-compatible/slow' } });
    const base = (await org.rest.post('/api/knowledge-bases', { name: 'Help' })).body.id as string;
    const big = (await org.rest.post(`/api/knowledge-bases/${base}/documents`, { title: 'Big', content: 'word' })).body.id as string;
    await gated.sql(`update knowledge_documents set content = repeat('word ', 6000), size_bytes = 30000 where id = ?`, [big]);
    const small = (await org.rest.post(`/api/knowledge-bases/${base}/documents`, { title: 'Small', content: 'A short one.' })).body.id as string;
    const document = (id: string) => ({ query: `{ document(knowledgeBaseId: "${base}", documentId: "${id}") { content } }` });
    const pause = () => new Promise((resolve) => setTimeout(resolve, 150));

    upstreamCalls = 0;
    const holding = org.rest.post(`/api/agents/${slow.body.id}/test`, { message: 'hold the place' });
    await until(() => upstreamCalls === 1);
    const refused = org.rest.post('/graphql', document(big));
    await pause();
    const restAfter = org.rest.get(`/api/knowledge-bases/${base}/documents/${small}`);
    await pause();
    const graphqlAfter = org.rest.post('/graphql', document(small));
    await pause();
    releaseAll();

    expect((await holding).status).toBe(200);
    const refusal = await refused;
    expect([refusal.status, refusal.body.errors?.[0]?.extensions?.code]).toEqual([400, 'BAD_USER_INPUT']);
    const rest = await restAfter;
    expect([rest.status, rest.body.content]).toEqual([200, 'A short one.']);
    const graphql = await graphqlAfter;
    expect([graphql.status, graphql.body.data?.document?.content]).toEqual([200, 'A short one.']);
  } finally {
    await gated.close();
  }
});
