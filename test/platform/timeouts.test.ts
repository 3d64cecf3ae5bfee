import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { toAppError } from '../../src/common/error-mapping.js';
import { createLogger } from '../../src/common/logger.js';
import { openDatabase } from '../../src/db/orm.js';
import { sendProblem } from '../../src/rest/problem.js';
import { requestTimeout } from '../../src/platform/request-timeout.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/database.js';
import { holdLock, lockEachTest, releaseLock, statementsWaitingOn } from '../helpers/lock-waits.js';
import { TestDeadlines } from '../helpers/deadlines.js';
import { eventually } from '../helpers/eventually.js';

/** A client of its own that holds the organization's row locked in an open transaction (rolled back by the caller). */
function holdOrganizationRow(app: TestApp, org: TestOrganization): Promise<pg.Client> {
  return holdLock(app, 'select id from organizations where id = $1 for update', [org.organizationId]);
}

describe('requestTimeout', () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    const app = express();
    app.use(requestTimeout(100, (res, error) => sendProblem(res, error, 'req-1')));
    app.get('/slow', (_req, res) => {
      setTimeout(() => (res.headersSent ? undefined : res.json({ late: true })), 500);
    });
    app.get('/fast', (_req, res) => {
      res.json({ fast: true });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers 503 UNAVAILABLE with Retry-After when the handler is too slow', async () => {
    const res = await fetch(`${baseUrl}/slow`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ code: 'UNAVAILABLE', status: 503 });
  });

  it('leaves a handler that answers in time alone', async () => {
    const res = await fetch(`${baseUrl}/fast`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ fast: true });
  });
});

/** A model provider that holds every chat completion until the test answers it. */
async function heldProvider() {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    held.push(res);
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** How many requests it got in all. */
    get calls() {
      return held.length;
    },
    /** Once it has got `count` requests in all. */
    holding: (count: number) =>
      eventually(
        () => held.length,
        (n) => n >= count,
        { what: `${count} requests at the provider` },
      ),
    /** Answers request `index` (late: after the test fired the deadline); resolves once the answer is sent. */
    async answer(index: number) {
      const res = held[index]!;
      if (res.destroyed) return;
      const sent = new Promise((resolve) => res.once('finish', resolve).once('close', resolve));
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-late',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'slow',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Late answer.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        }),
      );
      await sent;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('REQUEST_TIMEOUT_MS on both doors', () => {
  // A model provider that never answers keeps the handler busy until the deadline, which the test
  // fires once the provider holds the call (TestDeadlines): the requests on the way never time out.
  let upstream: Awaited<ReturnType<typeof heldProvider>>;
  const deadlines = new TestDeadlines();
  let app: TestApp;
  let acme: TestOrganization;
  let agentId: string;
  beforeAll(async () => {
    upstream = await heldProvider();
    app = await startTestApp({ requestTimeoutMs: 300, providers: { openaiCompatibleBaseUrl: upstream.baseUrl } }, undefined, {
      requestDeadline: deadlines.deadline,
    });
    acme = await app.organization('Acme');
    const created = await acme.rest.post('/api/agents', { name: 'Slow', instructions: 'Wait.', modelConfig: { model: 'openai-compatible/slow' } });
    expect(created.status).toBe(201);
    agentId = created.body.id;
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it('REST answers 503 problem+json with Retry-After', async () => {
    const sent = acme.rest.post(`/api/agents/${agentId}/test`, { message: 'hello?' });
    await upstream.holding(1);
    expect(deadlines.fire()).toBe(1);
    const res = await sent;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('UNAVAILABLE');
    expect(res.body.detail).toBe('The request was not answered within 300 ms; try again shortly');
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('GraphQL answers 503 with extensions.code UNAVAILABLE', async () => {
    const sent = fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { testAgent(id: "${agentId}", message: "hello?") { response } }` }),
    });
    await upstream.holding(2);
    expect(deadlines.fire()).toBe(1);
    const res = await sent;
    expect(res.status).toBe(503);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
  });

  it('a request answered before its deadline is untouched, and its deadline is cancelled', async () => {
    expect((await acme.rest.get(`/api/agents/${agentId}`)).status).toBe(200);
    expect(deadlines.pending).toBe(0);
  });
});

describe('database time limits map to 503', () => {
  it('a statement cancelled by statement_timeout (57014) is UNAVAILABLE', () => {
    const error = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(toAppError(error).code).toBe('UNAVAILABLE');
  });

  it('no free pool connection within DB_POOL_ACQUIRE_TIMEOUT_MS is UNAVAILABLE', () => {
    expect(toAppError(new Error('timeout exceeded when trying to connect')).code).toBe('UNAVAILABLE');
  });
});

describe('a timed-out request stops its work', () => {
  // The provider holds the call; the test fires the deadline, then the provider answers: what the
  // handler would do after the model's answer (store the reply, call the model again) must not happen.
  // That is seen after one more request through the same door, answered after the late answer arrived.
  let provider: Awaited<ReturnType<typeof heldProvider>>;
  const deadlines = new TestDeadlines();
  let app: TestApp;
  let acme: TestOrganization;
  let agentId: string;
  beforeAll(async () => {
    provider = await heldProvider();
    app = await startTestApp({ requestTimeoutMs: 300, providers: { openaiCompatibleBaseUrl: provider.baseUrl } }, undefined, {
      requestDeadline: deadlines.deadline,
    });
    acme = await app.organization('Acme');
    const created = await acme.rest.post('/api/agents', { name: 'Late', instructions: 'Answer.', modelConfig: { model: 'openai-compatible/slow' } });
    expect(created.status).toBe(201);
    agentId = created.body.id;
    expect((await acme.rest.post(`/api/agents/${agentId}/activate`, {})).status).toBe(200);
  });
  afterAll(async () => {
    await app.close();
    await provider.close();
  });

  async function messagesOf(conversationId: string): Promise<string[]> {
    const rows = await app.sql<{ role: string }>('select role from messages where conversation_id = ? order by sequence', [conversationId]);
    return rows.map((row) => row.role);
  }

  it('REST: the reply that arrives after the 503 is not stored', async () => {
    const conversation = await acme.rest.post(`/api/agents/${agentId}/conversations`, {});
    expect(conversation.status).toBe(201);
    const held = provider.calls;
    const sent = acme.rest.post(`/api/conversations/${conversation.body.id}/messages`, { message: 'hello?' });
    await provider.holding(held + 1);
    expect(deadlines.fire()).toBe(1);
    const res = await sent;
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('UNAVAILABLE');
    await provider.answer(held);
    expect((await acme.rest.get(`/api/conversations/${conversation.body.id}`)).status).toBe(200);
    expect(await messagesOf(conversation.body.id)).toEqual(['user']);
  });

  it('GraphQL: the same, with extensions.code UNAVAILABLE', async () => {
    const conversation = await acme.rest.post(`/api/agents/${agentId}/conversations`, {});
    const held = provider.calls;
    const sent = fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { sendMessage(conversationId: "${conversation.body.id}", message: "hello?") { response } }` }),
    });
    await provider.holding(held + 1);
    expect(deadlines.fire()).toBe(1);
    const res = await sent;
    expect(res.status).toBe(503);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
    await provider.answer(held);
    expect((await acme.rest.get(`/api/conversations/${conversation.body.id}`)).status).toBe(200);
    expect(await messagesOf(conversation.body.id)).toEqual(['user']);
  });

  it('GraphQL: aliased mutations run one after another, and none starts after the deadline', async () => {
    // Serial by the GraphQL spec: the provider holds the first; the deadline fires while it does.
    const fields = Array.from({ length: 8 }, (_, index) => `t${index}: testAgent(id: "${agentId}", message: "hi") { response }`);
    const held = provider.calls;
    const sent = fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { ${fields.join(' ')} }` }),
    });
    await provider.holding(held + 1);
    expect(deadlines.fire()).toBe(1);
    expect((await sent).status).toBe(503);
    await provider.answer(held);
    // The seven others would have followed the first's answer at once; a request through the same
    // door, answered after it, finds the provider still with that one call.
    expect((await acme.rest.get(`/api/agents/${agentId}`)).status).toBe(200);
    const read = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `{ agent(id: "${agentId}") { name } }` }),
    });
    expect(((await read.json()) as { data: { agent: { name: string } } }).data.agent.name).toBe('Late');
    expect(provider.calls - held).toBe(1);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// PGlite has one connection (one session) and no cancel: nothing can hold a lock against it or run beside it.
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('PostgreSQL: the statement running at the deadline is cancelled', () => {
  // Another session holds the organization's row lock, so adding a document (which locks that row
  // to count the quota) waits in PostgreSQL: without a cancel it would wait until the lock goes.
  let app: TestApp;
  let acme: TestOrganization;
  let knowledgeBaseId: string;
  const deadlines = new TestDeadlines();
  beforeAll(async () => {
    app = await startTestApp({ requestTimeoutMs: 400 }, undefined, { requestDeadline: deadlines.deadline });
    acme = await app.organization('Acme');
    const base = await acme.rest.post('/api/knowledge-bases', { name: 'Help' });
    expect(base.status).toBe(201);
    knowledgeBaseId = base.body.id;
  });
  const { expectCancelled, letGo } = lockEachTest(
    () => app,
    () => holdOrganizationRow(app, acme),
    deadlines,
  );
  afterAll(async () => {
    await app.close();
  });

  it('REST: 503, and no statement of the request is left running', async () => {
    await expectCancelled(async () => {
      const res = await acme.rest.post(`/api/knowledge-bases/${knowledgeBaseId}/documents`, { title: 'Hours', content: 'We open at nine.' });
      expect(res.body.code).toBe('UNAVAILABLE');
      return res.status;
    });
  });

  it('GraphQL: 503, and no statement of the request is left running', async () => {
    await expectCancelled(async () => {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
        body: JSON.stringify({
          query: `mutation { addDocument(knowledgeBaseId: "${knowledgeBaseId}", input: { title: "Hours", content: "We open at nine." }) { id } }`,
        }),
      });
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
      return res.status;
    });
  });

  it('nothing was half-written: the cancelled writes left no document', async () => {
    // The cancelled statements are gone (expectCancelled waited for it): nothing of them can still write.
    await letGo();
    const [row] = await app.sql<{ count: string | number }>('select count(*) as count from knowledge_documents where organization_id = ?', [
      acme.organizationId,
    ]);
    expect(Number(row!.count)).toBe(0);
  });
});

// A session the server ends inside a transaction (pg_ctl stop -m fast ends every session so; here
// pg_terminate_backend ends one): the statement, then the rollback, fail on the dead connection, and
// kysely's transaction never releases it (src/db/ended-connections.ts).
(TEST_DATABASE_URL ? describe : describe.skip)('a pooled connection the server ends inside a transaction', () => {
  it('goes back to the pool, so a full pool of them still serves afterwards', async () => {
    const test = await createTestDatabase();
    const logged: { msg: string }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void logged.push(JSON.parse(line)) });
    const database = await openDatabase({
      databaseUrl: test.url!,
      dataDir: 'memory://',
      migrate: false,
      logger,
      pool: { max: 2, acquireTimeoutMs: 3000, statementTimeoutMs: 0 },
    });
    const admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
    try {
      // As many as the pool holds: before the fix the pool was then full for good.
      for (let i = 0; i < 2; i++) {
        const error = await database.em
          .fork()
          .transactional(async (tx) => {
            const [{ pid }] = await tx.getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid', [], 'all', tx.getTransactionContext());
            await admin.query('select pg_terminate_backend($1)', [pid]);
            await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
          })
          .then(
            () => null,
            (caught: Error) => caught.message,
          );
        expect(error).toMatch(/terminat|not queryable/);
      }
      // The whole pool at once, within the acquire timeout (3 s): the ended connections are taken
      // back 1 s after they ended. Before, both waited out the timeout (a full pool for good).
      const holdOne = () =>
        database.em.fork().transactional(async (tx) => {
          await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
          await sleep(200);
          return 'served';
        });
      expect(await Promise.allSettled([holdOne(), holdOne()])).toEqual([
        { status: 'fulfilled', value: 'served' },
        { status: 'fulfilled', value: 'served' },
      ]);
      expect(database.poolStats()).toMatchObject({ total: 2, idle: 2, waiting: 0 });
      expect(logged.filter((line) => line.msg.includes('taken back into the pool'))).toHaveLength(2);
    } finally {
      await admin.end();
      // Closing waits for every checked-out connection: with one leaked it would wait for good.
      await Promise.race([database.close(), sleep(2000)]);
      await test.drop();
    }
  }, 30_000);
});

onPostgres('PostgreSQL: a client that goes away', () => {
  // Another session holds the organization's row lock, so adding a document waits in PostgreSQL; the
  // client gives up first. The request's statement is cancelled, and what that stop makes fail is not
  // a fault: no error or warning is logged for it on either door (a GraphQL page used to log one error
  // with its stack per field the stop reached), only the request's line, which says it was aborted.
  let app: TestApp;
  let acme: TestOrganization;
  let knowledgeBaseId: string;
  let holder: pg.Client;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    // Its deadline never fires (TestDeadlines): the client is the one that gives up.
    app = await startTestApp(
      { requestTimeoutMs: 10_000, logLevel: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
      { requestDeadline: new TestDeadlines().deadline },
    );
    acme = await app.organization('Acme');
    const base = await acme.rest.post('/api/knowledge-bases', { name: 'Help' });
    expect(base.status).toBe(201);
    knowledgeBaseId = base.body.id;
    holder = await holdOrganizationRow(app, acme);
  });
  afterAll(async () => {
    await releaseLock(holder);
    await app.close();
  });

  const document = (title: string) => `addDocument(knowledgeBaseId: "${knowledgeBaseId}", input: { title: "${title}", content: "We open at nine." }) { id }`;
  it.each([
    ['REST', () => `/api/knowledge-bases/${knowledgeBaseId}/documents`, () => JSON.stringify({ title: 'Hours', content: 'We open at nine.' })],
    // Two fields: the second, which the stop keeps from starting, fails too.
    ['GraphQL', () => '/graphql', () => JSON.stringify({ query: `mutation { a: ${document('Hours')} b: ${document('Days')} }` })],
  ])('%s: nothing but the request line, marked aborted', async (door, path, body) => {
    const requestId = `gone-${door.toLowerCase()}`;
    const client = new AbortController();
    const sent = fetch(`${app.baseUrl}${path()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey, 'x-request-id': requestId },
      body: body(),
      signal: client.signal,
    }).catch((error: unknown) => error);
    await eventually(
      () => statementsWaitingOn(app, holder),
      (waiting) => waiting.length === 1,
      { what: "the request's statement waiting for the lock", everyMs: 25 },
    );
    client.abort();
    await sent;
    const mine = () => lines.filter((line) => line.requestId === requestId);
    await eventually(mine, (logged) => logged.some((line) => line.aborted === true), { what: 'the request line marked aborted' });
    // What the stop made fail is logged as the work unwinds, after its statement was cancelled; one
    // more request through the same door is answered after that.
    await eventually(
      () => statementsWaitingOn(app, holder),
      (waiting) => waiting.length === 0,
      { what: 'the statement cancelled', everyMs: 25 },
    );
    expect((await acme.rest.get('/api/users/me')).status).toBe(200);
    expect(mine().filter((line) => Number(line.level) >= 40)).toEqual([]);
    expect(mine().filter((line) => line.aborted === true)).toHaveLength(1);
  });
});
