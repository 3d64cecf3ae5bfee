import { createServer, type Server } from 'node:http';
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
import { holdLock, lockEachTest, releaseLock } from '../helpers/lock-waits.js';

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

describe('REQUEST_TIMEOUT_MS on both doors', () => {
  // A model provider that never answers keeps the handler busy past the timeout.
  let upstream: Server;
  let app: TestApp;
  let acme: TestOrganization;
  let agentId: string;
  beforeAll(async () => {
    upstream = createServer(() => {});
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const openaiCompatibleBaseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    app = await startTestApp({ requestTimeoutMs: 300, providers: { openaiCompatibleBaseUrl } });
    acme = await app.organization('Acme');
    const created = await acme.rest.post('/api/agents', { name: 'Slow', instructions: 'Wait.', modelConfig: { model: 'openai-compatible/slow' } });
    expect(created.status).toBe(201);
    agentId = created.body.id;
  });
  afterAll(async () => {
    await app.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('REST answers 503 problem+json with Retry-After', async () => {
    const started = Date.now();
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'hello?' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('GraphQL answers 503 with extensions.code UNAVAILABLE', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { testAgent(id: "${agentId}", message: "hello?") { response } }` }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
  });

  it('fast requests are untouched', async () => {
    expect((await acme.rest.get(`/api/agents/${agentId}`)).status).toBe(200);
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

/** A model provider that answers every chat completion after `delayMs`, counting the calls it got. */
async function slowProvider(delayMs: number) {
  let calls = 0;
  const server = createServer((req, res) => {
    calls += 1;
    req.resume();
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'chatcmpl-slow', object: 'chat.completion', created: 1_700_000_000, model: 'slow',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Late answer.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      }));
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a timed-out request stops its work', () => {
  // The provider answers after 600 ms, the request times out at 300 ms: what the handler would do
  // after the model's answer (store the reply, call the model again) must not happen.
  let provider: Awaited<ReturnType<typeof slowProvider>>;
  let app: TestApp;
  let acme: TestOrganization;
  let agentId: string;
  beforeAll(async () => {
    provider = await slowProvider(600);
    app = await startTestApp({ requestTimeoutMs: 300, providers: { openaiCompatibleBaseUrl: provider.baseUrl } });
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
    const res = await acme.rest.post(`/api/conversations/${conversation.body.id}/messages`, { message: 'hello?' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('UNAVAILABLE');
    await sleep(900); // the provider has answered by now
    expect(await messagesOf(conversation.body.id)).toEqual(['user']);
  });

  it('GraphQL: the same, with extensions.code UNAVAILABLE', async () => {
    const conversation = await acme.rest.post(`/api/agents/${agentId}/conversations`, {});
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { sendMessage(conversationId: "${conversation.body.id}", message: "hello?") { response } }` }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
    await sleep(900);
    expect(await messagesOf(conversation.body.id)).toEqual(['user']);
  });

  it('GraphQL: aliased mutations run one after another, and none starts after the deadline', async () => {
    // Serial by the GraphQL spec: 8 × 600 ms if nothing stopped them; the deadline is at 300 ms.
    const fields = Array.from({ length: 8 }, (_, index) => `t${index}: testAgent(id: "${agentId}", message: "hi") { response }`);
    const before = provider.calls();
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `mutation { ${fields.join(' ')} }` }),
    });
    expect(res.status).toBe(503);
    await sleep(8 * 600 + 500); // long enough for all of them to have run
    expect(provider.calls() - before).toBe(1);
  });
});

// PGlite has one in-process connection and no cancel: nothing can hold a lock against it or run beside it.
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('PostgreSQL: the statement running at the deadline is cancelled', () => {
  // Another session holds the organization's row lock, so adding a document (which locks that row
  // to count the quota) waits in PostgreSQL: without a cancel it would wait until the lock goes.
  let app: TestApp;
  let acme: TestOrganization;
  let knowledgeBaseId: string;
  beforeAll(async () => {
    app = await startTestApp({ requestTimeoutMs: 400 });
    acme = await app.organization('Acme');
    const base = await acme.rest.post('/api/knowledge-bases', { name: 'Help' });
    expect(base.status).toBe(201);
    knowledgeBaseId = base.body.id;
  });
  const { expectCancelled, letGo } = lockEachTest(
    () => app,
    () => holdOrganizationRow(app, acme),
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
    await letGo();
    await sleep(300);
    const [row] = await app.sql<{ count: string | number }>('select count(*) as count from knowledge_documents where organization_id = ?', [acme.organizationId]);
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
    const database = await openDatabase({ databaseUrl: test.url!, dataDir: 'memory://', migrate: false, logger, pool: { max: 2, acquireTimeoutMs: 3000, statementTimeoutMs: 0 } });
    const admin = new pg.Client({ connectionString: test.url });
    await admin.connect();
    try {
      // As many as the pool holds: before the fix the pool was then full for good.
      for (let i = 0; i < 2; i++) {
        const error = await database.em.fork().transactional(async (tx) => {
          const [{ pid }] = await tx.getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid', [], 'all', tx.getTransactionContext());
          await admin.query('select pg_terminate_backend($1)', [pid]);
          await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
        }).then(() => null, (caught: Error) => caught.message);
        expect(error).toMatch(/terminat|not queryable/);
      }
      // The whole pool at once, within the acquire timeout (3 s): the ended connections are taken
      // back 1 s after they ended. Before, both waited out the timeout (a full pool for good).
      const holdOne = () => database.em.fork().transactional(async (tx) => {
        await tx.getConnection().execute('select 1', [], 'all', tx.getTransactionContext());
        await sleep(200);
        return 'served';
      });
      expect(await Promise.allSettled([holdOne(), holdOne()])).toEqual([{ status: 'fulfilled', value: 'served' }, { status: 'fulfilled', value: 'served' }]);
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
    app = await startTestApp({ requestTimeoutMs: 10_000, logLevel: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
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
    await new Promise((resolve) => setTimeout(resolve, 300));
    client.abort();
    await sent;
    const mine = () => lines.filter((line) => line.requestId === requestId);
    for (let tries = 0; tries < 40 && !mine().some((line) => line.aborted === true); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    // Give the stopped work's failures time to be logged, were they logged.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mine().filter((line) => Number(line.level) >= 40)).toEqual([]);
    expect(mine().filter((line) => line.aborted === true)).toHaveLength(1);
  });
});
