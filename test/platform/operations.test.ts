import { CreateApiKeyDocument, MeDocument, TestAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { toAppError } from '../../src/common/error-mapping.js';
import type { AddressInfo } from 'node:net';
import { MAX_OPERATION_LABEL_LENGTH, MAX_OPERATION_LABELS, QUEUE_DEPTH_SQL } from '../../src/platform/metrics.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parse } from 'graphql';
import { gatewaySchema } from '../../src/doors.js';
import { operationCost, SEARCH_COST } from '../../src/graphql/cost.js';
import { recordStatements } from '../helpers/users.js';
import { ConfigError, loadConfig, SANDBOX_ORIGINS } from '../../src/config.js';
import { FixedWindowLimiter } from '../../src/platform/rate-limit.js';
import { randomUUID } from 'node:crypto';
import { activeCampaign } from '../programs/fixtures.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenOperatorSocket } from '../../src/operator/operator-file.js';

/** A POST of `{}` to the operator door's socket, as the CLI sends it. */
function postToSocket(
  socketPath: string,
  path: string,
  bearer: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: { code?: string; detail?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

// Running the gateway: logs, outages, metrics, the organization gate, GraphQL cost, limits, hardening
// and idempotency, one describe each (they were one file each), each on its own app(s) and database(s).
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('logging', () => {
  let app: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ logLevel: 'trace' }, { write: (line: string) => void lines.push(line) });
  });
  afterAll(() => app.close());

  it('logs every request with its id but never a key, a token or a secret', async () => {
    const org = await app.organization('Logged');
    const { body: created } = await org.rest.post('/api/auth/api-keys', { name: 'logged', prefix: 'log_' });
    const { body: token } = await org.rest.post('/api/auth/token');
    await app.rest({ authorization: `Bearer ${token.accessToken}` }).get('/api/users/me');
    const { createApiKey } = await org.graphql.ok(CreateApiKeyDocument, { input: { name: 'gql', prefix: 'lg_' } });
    await app.rest({ 'x-api-key': 'wrong_key_value_1234567890' }).get('/api/users/me');

    const log = lines.join('');
    expect(log).toContain('"requestId"');
    expect(log).toContain('/api/users/me');
    expect(log).toContain('"x-api-key":"[redacted]"');
    for (const secret of [org.apiKey, created.secret, token.accessToken, createApiKey.secret, 'wrong_key_value_1234567890']) {
      expect(log).not.toContain(secret);
    }
  });
});

describe('request-log', () => {
  // The request log at info, as an operator reads it: one short line per request, no header dump.
  let app: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
  });
  afterAll(() => app.close());

  it('at info, a request is one line with method, url, status, time and request id, and no headers', async () => {
    const org = await app.organization('Logged');
    lines.length = 0;
    const res = await org.rest.with({ 'x-request-id': 'log-shape-1', 'user-agent': 'shape-test-agent' }).get('/api/users/me?');
    expect(res.status).toBe(200);
    await app.rest({ 'x-request-id': 'log-shape-2' }).get('/api/users/me');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.requestId?.startsWith('log-shape-'));
    expect(entries).toHaveLength(2);
    const [ok, refused] = entries;
    expect(ok).toMatchObject({ level: 30, requestId: 'log-shape-1', req: { method: 'GET', url: '/api/users/me?' }, res: { statusCode: 200 } });
    expect(ok!.msg).toMatch(/^GET \/api\/users\/me\? 200 \d+ms$/);
    expect(typeof ok!.responseTime).toBe('number');
    expect(Object.keys(ok!.req).sort()).toEqual(['method', 'url']);
    expect(Object.keys(ok!.res)).toEqual(['statusCode']);
    expect(lines.join('')).not.toContain('shape-test-agent');
    expect(lines.join('')).not.toContain('"headers"');
    expect(refused).toMatchObject({ res: { statusCode: 401 } });
  });
});

describe('outage-logging', () => {
  // While the database is lost every request fails alike: each is logged as one warn line naming the
  // cause, not an error with a stack per request (which buried everything else during an outage).
  const entries: Record<string, unknown>[] = [];
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp({ logLevel: 'info' }, { write: (line: string) => void entries.push(JSON.parse(line) as Record<string, unknown>) });
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  it('a lost database is logged at warn with its cause, without a stack, on both doors', async () => {
    const auth = app.gateway.services.auth;
    const original = auth.me;
    auth.me = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    try {
      entries.length = 0;
      expect((await acme.rest.get('/api/users/me')).status).toBe(503);
      const graphql = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
        body: JSON.stringify({ query: '{ me { id } }' }),
      });
      expect(graphql.status).toBe(503);
    } finally {
      auth.me = original;
    }
    const failures = entries.filter((entry) => entry.msg === 'request failed' || entry.msg === 'GraphQL operation failed');
    expect(failures.map((entry) => entry.msg).sort()).toEqual(['GraphQL operation failed', 'request failed']);
    for (const entry of failures) {
      expect(entry).toMatchObject({ level: 40, code: 'UNAVAILABLE', cause: { name: 'Error', code: 'ECONNREFUSED' } });
      expect(entry.err).toBeUndefined();
      expect(JSON.stringify(entry)).not.toContain('    at ');
    }
  });

  it('an unexpected failure is still logged as an error with its stack', async () => {
    const auth = app.gateway.services.auth;
    const original = auth.me;
    auth.me = async () => {
      throw new Error('a defect');
    };
    try {
      entries.length = 0;
      expect((await acme.rest.get('/api/users/me')).status).toBe(500);
    } finally {
      auth.me = original;
    }
    const failure = entries.find((entry) => entry.msg === 'request failed');
    expect(failure).toMatchObject({ level: 50, err: { message: 'a defect' } });
    expect((failure!.err as { stack: string }).stack).toContain('    at ');
  });
});

describe('unavailable', () => {
  // A lost database (what the fault script does to PostgreSQL) seen through each door: REST answers
  // 503 problem+json, GraphQL answers 503 in GraphQL's own shape; both with Retry-After.
  const lost = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  let app: TestApp;
  let acme: TestOrganization;
  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  function graphqlPost(body: string, headers: Record<string, string> = { 'x-api-key': acme.apiKey }) {
    return fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  }

  describe('the database is lost while authenticating', () => {
    let restore: () => void;
    beforeEach(() => {
      const auth = app.gateway.services.auth;
      const original = auth.authenticate;
      auth.authenticate = async () => {
        throw lost();
      };
      restore = () => {
        auth.authenticate = original;
      };
    });
    afterEach(() => restore());

    it('REST answers 503 problem+json with Retry-After', async () => {
      const res = await acme.rest.get('/api/agents');
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body.code).toBe('UNAVAILABLE');
    });

    it('GraphQL answers 503 with an UNAVAILABLE error in GraphQL shape and Retry-After', async () => {
      const res = await graphqlPost(JSON.stringify({ query: '{ me { id } }' }));
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('retry-after')).toBe('5');
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string; requestId: string } }[] };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
      expect(body.errors[0]!.extensions.requestId).toBe(res.headers.get('x-request-id'));
    });
  });

  describe('the database is lost inside a resolver', () => {
    it('GraphQL answers 503 with Retry-After and the UNAVAILABLE error', async () => {
      const auth = app.gateway.services.auth;
      const original = auth.me;
      auth.me = async () => {
        throw lost();
      };
      try {
        const res = await graphqlPost(JSON.stringify({ query: '{ me { id } }' }));
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        const body = (await res.json()) as { data: unknown; errors: { extensions: { code: string } }[] };
        expect(body.data).toBeNull();
        expect(body.errors.map((error) => error.extensions.code)).toEqual(['UNAVAILABLE']);
      } finally {
        auth.me = original;
      }
    });

    it('other errors keep HTTP 200 and no Retry-After', async () => {
      const res = await graphqlPost(JSON.stringify({ query: '{ agent(id: "00000000-0000-4000-8000-000000000000") { id } }' }));
      expect(res.status).toBe(200);
      expect(res.headers.get('retry-after')).toBeNull();
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('NOT_FOUND');
    });
  });

  it('a malformed body on /graphql answers 400 in GraphQL shape', async () => {
    const res = await graphqlPost('{"query": ');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  describe('lost connections map to UNAVAILABLE, never a 500', () => {
    it.each([
      ['a statement on a connection lost earlier (pg)', new Error('Client has encountered a connection error and is not queryable')],
      ['a statement on a closed connection (pg)', new Error('Client was closed and is not queryable')],
      [
        'the backend ended because another one crashed (57P02)',
        Object.assign(new Error('terminating connection because of crash of another server process'), { code: '57P02' }),
      ],
    ])('%s', (_label, error) => {
      expect(toAppError(error).code).toBe('UNAVAILABLE');
    });
  });
});

describe('metrics', () => {
  let app: TestApp;
  let acme: TestOrganization;

  const METRICS_TOKEN = 'metrics-token-for-tests';

  beforeAll(async () => {
    app = await startTestApp({ metricsToken: METRICS_TOKEN });
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  async function scrape(target: TestApp = app): Promise<string> {
    const res = await fetch(`${target.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  }

  /** The value of one series, or 0 when it is not there yet. */
  function value(text: string, name: string, labels: Record<string, string>): number {
    const wanted = Object.entries(labels).map(([key, label]) => `${key}="${label}"`);
    const line = text.split('\n').find((row) => row.startsWith(`${name}{`) && wanted.every((part) => row.slice(0, row.indexOf('}') + 1).includes(part)));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }

  describe('GET /metrics', () => {
    it('serves process metrics in the Prometheus text format with the METRICS_TOKEN bearer', async () => {
      const text = await scrape();
      expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
      expect(text).toContain('# TYPE http_request_duration_seconds histogram');
      expect(text).toMatch(/^runner_queue_depth \d+$/m);
      // The gauge's query runs against the real schema (a failing one would silently keep 0).
      expect(await app.sql(QUEUE_DEPTH_SQL)).toEqual([{ depth: 0 }]);
      // PGlite has one connection and no pool; PostgreSQL (TEST_DATABASE_URL) shows its pool.
      // PGlite shows what waits for its one session instead.
      if (app.db.database.kind === 'pglite') {
        expect(text).not.toContain('db_pool_connections{');
        expect(text).toMatch(/^db_embedded_waiting\{for="request"\} \d+$/m);
        expect(text).toMatch(/^db_embedded_waiting\{for="background"\} \d+$/m);
      } else {
        expect(text).toMatch(/^db_pool_connections\{state="total"\} \d+$/m);
        expect(text).not.toContain('db_embedded_waiting{');
      }
    });

    it('counts a REST route by its pattern, never by the raw URL', async () => {
      const labels = { door: 'rest', route: '/api/agents/:id', method: 'GET', status: '404' };
      const before = value(await scrape(), 'http_requests_total', labels);
      const id = '00000000-0000-4000-8000-000000000001';
      expect((await acme.rest.get(`/api/agents/${id}`)).status).toBe(404);
      expect((await acme.rest.get(`/api/agents/00000000-0000-4000-8000-000000000002`)).status).toBe(404);
      const text = await scrape();
      expect(value(text, 'http_requests_total', labels)).toBe(before + 2);
      expect(value(text, 'http_request_duration_seconds_count', { door: 'rest', route: '/api/agents/:id', method: 'GET' })).toBeGreaterThanOrEqual(2);
      expect(text).not.toContain(id);
    });

    it('counts a GraphQL operation by its name', async () => {
      const labels = { door: 'graphql', route: 'Me', method: 'POST', status: '200' };
      const before = value(await scrape(), 'http_requests_total', labels);
      await acme.graphql.ok(MeDocument);
      expect(value(await scrape(), 'http_requests_total', labels)).toBe(before + 1);
    });

    it('counts errors by code, from both doors', async () => {
      const before = value(await scrape(), 'errors_total', { code: 'NOT_FOUND' });
      expect((await acme.rest.get('/api/no-such-route')).status).toBe(404);
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
        body: JSON.stringify({ query: 'query Missing { agent(id: "00000000-0000-4000-8000-000000000003") { id } }' }),
      });
      const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('NOT_FOUND');
      const text = await scrape();
      expect(value(text, 'errors_total', { code: 'NOT_FOUND' })).toBe(before + 2);
      expect(value(text, 'http_requests_total', { door: 'rest', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
      expect(value(text, 'http_requests_total', { door: 'graphql', route: 'Missing' })).toBe(1);
    });

    it('without the METRICS_TOKEN bearer → 401; with no token and no METRICS_PORT it is not served (404)', async () => {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong-token-wrong-token' },
        { authorization: `Basic ${METRICS_TOKEN}` },
        { 'x-api-key': acme.apiKey },
      ]) {
        const res = await fetch(`${app.baseUrl}/metrics`, { headers });
        expect(res.status).toBe(401);
        expect(await res.text()).not.toContain('http_requests_total');
      }
      const open = await startTestApp({ metricsToken: undefined });
      try {
        expect((await fetch(`${open.baseUrl}/metrics`)).status).toBe(404);
      } finally {
        await open.close();
      }
    });

    it('METRICS_PORT serves /metrics on its own listener, and not on the main port', async () => {
      const separate = await startTestApp({ metricsToken: undefined, metricsPort: 1 });
      const server = separate.gateway.metricsApp!.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        expect((await fetch(`${separate.baseUrl}/metrics`)).status).toBe(404);
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('# TYPE http_requests_total counter');
        expect((await fetch(`http://127.0.0.1:${port}/api/users/me`)).status).toBe(404);
      } finally {
        server.close();
        await separate.close();
      }
    });

    it('METRICS_ENABLED=false removes the endpoint', async () => {
      const off = await startTestApp({ metricsEnabled: false, metricsToken: METRICS_TOKEN });
      try {
        expect((await fetch(`${off.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(404);
      } finally {
        await off.close();
      }
    });
  });
});

describe('metrics-labels', () => {
  // Issue 9, finding 1: GraphQL operation names are client-chosen; as metric labels they must come from a bounded set.

  let app: TestApp;
  let acme: TestOrganization;

  const METRICS_TOKEN = 'metrics-token-for-tests';
  const auth = { authorization: `Bearer ${METRICS_TOKEN}` };

  beforeAll(async () => {
    app = await startTestApp({ metricsToken: METRICS_TOKEN });
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  async function scrape(): Promise<string> {
    const res = await fetch(`${app.baseUrl}/metrics`, { headers: auth });
    expect(res.status).toBe(200);
    return res.text();
  }

  async function operation(name: string, headers: Record<string, string>) {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: `query ${name} { me { id } }` }),
    });
    await res.text();
    return res.status;
  }

  const series = (text: string, route: string) => text.split('\n').filter((line) => line.includes(`route="${route}"`)).length;

  it('an anonymous operation is labelled anonymous, whatever its name', async () => {
    const name = `Huge${'x'.repeat(200_000)}`;
    const before = (await scrape()).length;
    expect(await operation(name, {})).toBe(401);
    expect(await operation(name, { 'x-api-key': 'tag_wrong' })).toBe(401);
    const text = await scrape();
    expect(text).not.toContain('Huge');
    expect(series(text, 'anonymous')).toBeGreaterThan(0);
    expect(text.length - before).toBeLessThan(10_000);
  });

  it('authenticated names are kept up to a number and a length; the rest count as other, so /metrics stays bounded', async () => {
    const headers = { 'x-api-key': acme.apiKey };
    // Fill the set of kept names, then keep sending new ones: short, long, many.
    for (let i = 0; i < MAX_OPERATION_LABELS + 20; i++) expect(await operation(`Op${i}`, headers)).toBe(200);
    const full = await scrape();
    expect(series(full, 'Op0')).toBeGreaterThan(0);
    expect(series(full, `Op${MAX_OPERATION_LABELS + 10}`)).toBe(0);
    expect(series(full, 'other')).toBeGreaterThan(0);
    for (let i = 0; i < 200; i++) expect(await operation(`Long${i}${'y'.repeat(5000)}`, headers)).toBe(200);
    for (let i = 0; i < 50; i++) expect(await operation(`Later${i}`, headers)).toBe(200);
    const after = await scrape();
    expect(after).not.toContain('Long');
    expect(after).not.toContain('Later');
    // Same series as before, only counts moved (a scrape's own process metrics vary by a few bytes).
    expect(Math.abs(after.length - full.length)).toBeLessThan(2_000);
    expect(after.length).toBeLessThan(1_000_000);
  });

  it('a name just within the length limit is kept; one character more is other', async () => {
    const fresh = await startTestApp(app.config);
    try {
      const org = await fresh.organization('Fresh');
      const kept = `K${'k'.repeat(MAX_OPERATION_LABEL_LENGTH - 1)}`;
      const cut = `C${'c'.repeat(MAX_OPERATION_LABEL_LENGTH)}`;
      for (const name of [kept, cut]) {
        await fetch(`${fresh.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': org.apiKey },
          body: JSON.stringify({ query: `query ${name} { me { id } }` }),
        });
      }
      const text = await (await fetch(`${fresh.baseUrl}/metrics`, { headers: auth })).text();
      expect(text).toContain(`route="${kept}"`);
      expect(text).not.toContain(cut);
    } finally {
      await fresh.close();
    }
  });
});

describe('organization-gate', () => {
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
});

describe('graphql-cost', () => {
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
      const query =
        'query Page($agentId: ID!, $limit: Int) { conversations(agentId: $agentId, limit: $limit) { data { agent { conversations(limit: 100) { data { id title status } } } } } }';
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
});

describe('limits', () => {
  const PER_KEY = 5;
  const ANONYMOUS = 3;

  let app: TestApp;
  let acme: TestOrganization;
  let globex: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp({ rateLimit: { perMinute: PER_KEY, anonymousPerMinute: ANONYMOUS, organizationPerMinute: 0 } });
    acme = await app.organization('Acme');
    globex = await app.organization('Globex');
  });
  afterAll(() => app.close());

  function graphqlPost(headers: Record<string, string>) {
    return fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: '{ me { id } }' }),
    });
  }

  describe('the per-key rate limit', () => {
    it('counts per key on both doors together, with RateLimit-* headers decreasing, then answers 429', async () => {
      const remaining: number[] = [];
      for (let i = 0; i < PER_KEY - 1; i++) {
        const res = await acme.rest.get('/api/users/me');
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe(String(PER_KEY));
        expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
        remaining.push(Number(res.headers.get('ratelimit-remaining')));
      }
      const last = await acme.graphql.run(MeDocument);
      expect(last.errors).toBeUndefined();
      expect(remaining).toEqual([4, 3, 2, 1]);

      const rest = await acme.rest.get('/api/users/me');
      expect(rest.status).toBe(429);
      expect(rest.headers.get('content-type')).toContain('application/problem+json');
      expect(rest.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(rest.headers.get('ratelimit-remaining')).toBe('0');

      const graphql = await graphqlPost({ 'x-api-key': acme.apiKey });
      expect(graphql.status).toBe(429);
      expect(Number(graphql.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await graphql.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('RATE_LIMITED');

      // Another key is counted on its own.
      const other = await globex.rest.get('/api/users/me');
      expect(other.status).toBe(200);
      expect(other.headers.get('ratelimit-remaining')).toBe(String(PER_KEY - 1));
    });

    it('a token counts against the key it was minted from', async () => {
      const token = await globex.rest.post('/api/auth/token');
      expect(token.status).toBeLessThan(300);
      const res = await app.rest({ authorization: `Bearer ${token.body.accessToken}` }).get('/api/users/me');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(PER_KEY - 3));
    });

    it('limits requests without valid credentials by client IP, with the lower limit', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < ANONYMOUS; i++) {
        const res = await app.rest({ 'x-api-key': 'not-a-key' }).get('/api/users/me');
        expect(res.headers.get('ratelimit-limit')).toBe(String(ANONYMOUS));
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401]);
      const refused = await app.rest().get('/api/agents');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMITED');
      const graphql = await graphqlPost({});
      expect(graphql.status).toBe(429);
      // A valid key from the same IP is not affected.
      expect((await globex.rest.get('/api/users/me')).status).toBe(200);
    });

    it('never limits health, readiness or the OpenAPI document', async () => {
      for (let i = 0; i < ANONYMOUS + 2; i++) {
        for (const path of ['/healthz', '/readyz', '/api/openapi.json']) {
          const res = await app.rest().get(path);
          expect(res.status).toBe(200);
          expect(res.headers.get('ratelimit-limit')).toBeNull();
        }
      }
    });
  });

  describe('the per-organization rate limit (issue 9, finding 7)', () => {
    const ORG = 8;

    it('counts every key of the organization together, so minting keys does not sidestep it, on both doors', async () => {
      const limited = await startTestApp({ rateLimit: { perMinute: PER_KEY, anonymousPerMinute: 0, organizationPerMinute: ORG } });
      try {
        const org = await limited.organization('Minting');
        const mint = async (name: string) => {
          const res = await org.rest.post('/api/auth/api-keys', { name, prefix: 'k_' });
          expect(res.status).toBe(201);
          return res.body.secret as string;
        };
        const [secondKey, thirdKey] = [await mint('second'), await mint('third')]; // the first key: 2 of 5, the organization: 2 of 8
        const [second, third] = [limited.rest({ 'x-api-key': secondKey }), limited.rest({ 'x-api-key': thirdKey })];
        const headers = (res: { headers: Headers }) => [res.headers.get('ratelimit-limit'), res.headers.get('ratelimit-remaining')];
        const firsts = [];
        for (let i = 0; i < 3; i++) firsts.push(await org.rest.get('/api/users/me'));
        // the first key is the tighter: 2, 1, 0 of 5 left while the organization has 5, 4, 3 of 8
        expect(firsts.map(headers)).toEqual([
          [String(PER_KEY), '2'],
          [String(PER_KEY), '1'],
          [String(PER_KEY), '0'],
        ]);
        const seconds = [];
        for (let i = 0; i < 3; i++) seconds.push(await second.get('/api/users/me'));
        expect(seconds.map((res) => res.status)).toEqual([200, 200, 200]);
        // the second key has 4, 3, 2 left; the organization 2, 1, 0: it reports the organization's
        expect(seconds.map(headers)).toEqual([
          [String(ORG), '2'],
          [String(ORG), '1'],
          [String(ORG), '0'],
        ]);

        const rest = await third.get('/api/users/me');
        expect(rest.status).toBe(429);
        expect(rest.body).toMatchObject({ code: 'RATE_LIMITED', detail: expect.stringContaining('per organization') });
        expect(headers(rest)).toEqual([String(ORG), '0']);
        expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
        const graphql = await fetch(`${limited.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': thirdKey },
          body: JSON.stringify({ query: '{ me { id } }' }),
        });
        expect(graphql.status).toBe(429);
        expect(((await graphql.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('RATE_LIMITED');

        // Another organization is counted on its own.
        const other = await limited.organization('Other');
        const fresh = await other.rest.get('/api/users/me');
        expect(fresh.status).toBe(200);
        expect(headers(fresh)).toEqual([String(PER_KEY), String(PER_KEY - 1)]);
      } finally {
        await limited.close();
      }
    });

    it('defaults to ten times the per-key limit; 0 turns it off; REDIS_URL must be redis:// or rediss://', () => {
      const base = { JWT_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/gateway-test-unused' };
      expect(loadConfig(base).rateLimit).toEqual({ perMinute: 600, anonymousPerMinute: 60, organizationPerMinute: 6000, redisUrl: undefined });
      expect(loadConfig({ ...base, RATE_LIMIT_PER_MINUTE: '100' }).rateLimit.organizationPerMinute).toBe(1000);
      expect(loadConfig({ ...base, RATE_LIMIT_ORG_PER_MINUTE: '0' }).rateLimit.organizationPerMinute).toBe(0);
      expect(loadConfig({ ...base, REDIS_URL: 'redis://127.0.0.1:6379' }).rateLimit.redisUrl).toBe('redis://127.0.0.1:6379');
      expect(() => loadConfig({ ...base, REDIS_URL: 'http://127.0.0.1:6379' })).toThrow('REDIS_URL must start with redis: or rediss:');
      expect(() => loadConfig({ ...base, RATE_LIMIT_ORG_PER_MINUTE: '-1' })).toThrow('RATE_LIMIT_ORG_PER_MINUTE must be an integer');
    });
  });

  describe('RATE_LIMIT_PER_MINUTE=0', () => {
    it('turns the limit off: no headers, no 429', async () => {
      const open = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 0, organizationPerMinute: 0 } });
      try {
        for (let i = 0; i < 5; i++) {
          const res = await open.rest().get('/api/users/me');
          expect(res.status).toBe(401);
          expect(res.headers.get('ratelimit-limit')).toBeNull();
        }
      } finally {
        await open.close();
      }
    });
  });

  describe('FixedWindowLimiter', () => {
    it('starts a fresh window a minute after the first request of the last one', () => {
      let now = 1_000_000;
      const limiter = new FixedWindowLimiter(() => now);
      expect(limiter.take('k', 2)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
      now += 30_000;
      expect(limiter.take('k', 2)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 30 });
      expect(limiter.take('k', 2)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
      now += 30_000;
      expect(limiter.take('k', 2)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
    });

    it('peek tells what take would answer without counting', () => {
      let now = 1_000_000;
      const limiter = new FixedWindowLimiter(() => now);
      expect(limiter.peek('k', 2)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
      limiter.take('k', 2);
      now += 20_000;
      expect(limiter.peek('k', 2)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 40 });
      expect(limiter.peek('k', 2)).toMatchObject({ allowed: true, remaining: 1 });
      limiter.take('k', 2);
      expect(limiter.peek('k', 2)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 40 });
      now += 40_000;
      expect(limiter.peek('k', 2)).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
    });
  });
});

describe('hardening', () => {
  // Issue 9, finding 11: caching, sniffing, CORS and the proxy setting.

  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  describe('response headers', () => {
    it('answers carrying a secret or a token are no-store and nosniff, on both doors', async () => {
      const created = await acme.rest.post('/api/auth/api-keys', { name: 'ci', prefix: 'ci_' });
      expect(created.status).toBe(201);
      const token = await acme.rest.post('/api/auth/token');
      expect(token.status).toBe(200);
      const gql = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
        body: JSON.stringify({ query: 'mutation { createApiKey(input: {name: "g", prefix: "g_"}) { secret } }' }),
      });
      expect(((await gql.json()) as { data: { createApiKey: { secret: string } } }).data.createApiKey.secret).toMatch(/^g_/);
      for (const headers of [created.headers, token.headers, gql.headers]) {
        expect(headers.get('cache-control')).toBe('no-store');
        expect(headers.get('x-content-type-options')).toBe('nosniff');
      }
      expect((await acme.graphql.run(CreateApiKeyDocument, { input: { name: 'typed', prefix: 'typed_' } })).data?.createApiKey.secret).toBeDefined();
    });

    it('every /api and /graphql answer is no-store, errors and GET included; nosniff everywhere', async () => {
      for (const [path, init] of [
        ['/api/users/me', {}],
        ['/api/agents', { headers: { 'x-api-key': acme.apiKey } }],
        ['/api/no-such-route', { headers: { 'x-api-key': acme.apiKey } }],
        ['/api/openapi.json', {}],
        ['/graphql?query=%7B__typename%7D', { headers: { 'apollo-require-preflight': '1' } }],
        ['/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }],
      ] as const) {
        const res = await fetch(`${app.baseUrl}${path}`, init as RequestInit);
        expect([path, res.headers.get('cache-control'), res.headers.get('x-content-type-options')]).toEqual([path, 'no-store', 'nosniff']);
      }
      for (const path of ['/healthz', '/readyz', '/nowhere']) {
        expect((await fetch(`${app.baseUrl}${path}`)).headers.get('x-content-type-options')).toBe('nosniff');
      }
    });
  });

  describe('CORS', () => {
    async function preflight(target: TestApp, path: string, origin: string) {
      const res = await fetch(`${target.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
      });
      return res.headers.get('access-control-allow-origin');
    }

    it('another origin is not allowed on either door; Apollo Sandbox is, by default outside production', async () => {
      for (const path of ['/graphql', '/api/agents']) {
        expect(await preflight(app, path, 'https://evil.example')).toBeNull();
        for (const origin of SANDBOX_ORIGINS) expect(await preflight(app, path, origin)).toBe(origin);
      }
      const simple = await fetch(`${app.baseUrl}/api/users/me`, { headers: { origin: 'https://evil.example', 'x-api-key': acme.apiKey } });
      expect(simple.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('CORS_ORIGINS is the allow-list; production allows none by default', async () => {
      expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).corsOrigins).toEqual([]);
      expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).corsOrigins).toEqual(SANDBOX_ORIGINS);
      expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), CORS_ORIGINS: '' }).corsOrigins).toEqual([]);
      const config = loadConfig({ JWT_SECRET: 'x'.repeat(32), CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' });
      expect(config.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
      const listed = await startTestApp({ corsOrigins: config.corsOrigins });
      try {
        expect(await preflight(listed, '/graphql', 'https://app.example.com')).toBe('https://app.example.com');
        expect(await preflight(listed, '/api/agents', 'http://localhost:3000')).toBe('http://localhost:3000');
        expect(await preflight(listed, '/graphql', SANDBOX_ORIGINS[0]!)).toBeNull();
        expect(await preflight(listed, '/graphql', 'https://app.example.com.evil.example')).toBeNull();
      } finally {
        await listed.close();
      }
      for (const bad of ['*', 'app.example.com', 'https://app.example.com/', 'ftp://x.example']) {
        expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS must be/);
      }
    });
  });

  describe('TRUST_PROXY and the anonymous rate limit', () => {
    async function anonymous(target: TestApp, forwardedFor: string) {
      return (await fetch(`${target.baseUrl}/api/users/me`, { headers: { 'x-forwarded-for': forwardedFor } })).status;
    }

    it('off (the default): X-Forwarded-For is ignored, so it cannot dodge the per-IP limit', async () => {
      expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).trustProxy).toBe(false);
      const target = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 2, organizationPerMinute: 0 } });
      try {
        expect([await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.2'), await anonymous(target, '203.0.113.3')]).toEqual([
          401, 401, 429,
        ]);
      } finally {
        await target.close();
      }
    });

    it('behind a trusted proxy, each client address has its own bucket', async () => {
      const trustProxy = loadConfig({ JWT_SECRET: 'x'.repeat(32), TRUST_PROXY: 'loopback' }).trustProxy;
      const target = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 2, organizationPerMinute: 0 }, trustProxy });
      try {
        expect([await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.1')]).toEqual([
          401, 401, 429,
        ]);
        expect(await anonymous(target, '203.0.113.2')).toBe(401);
      } finally {
        await target.close();
      }
    });

    it('the operator door is not on the public listener; on its socket its refused tokens count in a bucket of their own: 401, 401, then 429', async () => {
      const target = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 2, organizationPerMinute: 0 } });
      const dir = mkdtempSync(join(tmpdir(), 'gateway-operator-test-'));
      const socket = join(dir, 'operator.sock');
      const close = await listenOperatorSocket(createServer(target.gateway.operatorApp), socket, dir);
      try {
        const token = target.gateway.operatorToken;
        const viaSocket = (bearer: string) => postToSocket(socket, '/operator/commands/org:list', bearer);
        // The public listener does not serve the door, whatever is sent.
        const publicly = await fetch(`${target.baseUrl}/operator/commands/org:list`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        expect([publicly.status, ((await publicly.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
        // Anonymous requests from this address use up its own counter ...
        expect([await anonymous(target, '198.51.100.9'), await anonymous(target, '198.51.100.9'), await anonymous(target, '198.51.100.9')]).toEqual([
          401, 401, 429,
        ]);
        // ... and the CLI is not locked out; its own failures are counted on the door's bucket.
        expect((await viaSocket(token)).status).toBe(200);
        expect([(await viaSocket('guess-1')).status, (await viaSocket('guess-2')).status]).toEqual([401, 401]);
        const limited = await viaSocket('guess-3');
        expect([limited.status, limited.body.code, limited.body.detail]).toEqual([429, 'RATE_LIMITED', expect.stringMatching(/per minute per operator door/)]);
        expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      } finally {
        await close();
        rmSync(dir, { recursive: true, force: true });
        await target.close();
      }
    });

    it('HOST is loopback unless set: a laptop’s server is not offered to its network (the image sets 0.0.0.0)', () => {
      expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).host).toBe('127.0.0.1');
      expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
      expect(readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8')).toMatch(/^ENV .*\bHOST=0\.0\.0\.0\b/m);
    });

    it('TRUST_PROXY values: true, hops, addresses and subnets; anything else stops the start', () => {
      const parse = (value: string) => loadConfig({ JWT_SECRET: 'x'.repeat(32), TRUST_PROXY: value }).trustProxy;
      expect(parse('true')).toBe(true);
      expect(parse('false')).toBe(false);
      expect(parse('1')).toBe(1);
      expect(parse('10.0.0.0/8, loopback,::1')).toBe('10.0.0.0/8,loopback,::1');
      for (const bad of ['yesplease', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/1']) {
        expect(() => parse(bad)).toThrow(ConfigError);
      }
    });
  });

  it('METRICS_TOKEN must be long enough; METRICS_PORT a port', () => {
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16/);
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), METRICS_PORT: '70000' })).toThrow(/METRICS_PORT must be an integer/);
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32), METRICS_PORT: '9464' }).metricsPort).toBe(9464);
  });
});

describe('idempotency', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  const agentBody = (name: string) => ({ name, instructions: 'You help customers.', modelConfig: { model: 'builtin/echo' } });
  const withKey = (org: TestOrganization, key: string) => org.rest.with({ 'idempotency-key': key });

  async function agentsNamed(organizationId: string, name: string): Promise<number> {
    const [row] = await app.sql<{ count: number }>('select count(*)::int as count from agents where organization_id = ? and name = ?', [organizationId, name]);
    return row!.count;
  }

  async function idempotencyRows(organizationId: string): Promise<Record<string, unknown>[]> {
    return app.sql('select * from idempotency_keys where organization_id = ?', [organizationId]);
  }

  describe('Idempotency-Key on POST /api/agents', () => {
    it('replays the first answer (same status, same id) without creating a second agent', async () => {
      const key = randomUUID();
      const first = await withKey(acme, key).post('/api/agents', agentBody('Replayed'));
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // The same body with its keys in another order is the same request.
      const { modelConfig, instructions, name } = agentBody('Replayed');
      const again = await withKey(acme, key).post('/api/agents', { modelConfig, instructions, name });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await agentsNamed(acme.organizationId, 'Replayed')).toBe(1);
    });

    it('answers 409 when the key comes back with a different body', async () => {
      const key = randomUUID();
      expect((await withKey(acme, key).post('/api/agents', agentBody('Body A'))).status).toBe(201);
      const clash = await withKey(acme, key).post('/api/agents', agentBody('Body B'));
      expect(clash.status).toBe(409);
      expect(clash.body).toMatchObject({ code: 'CONFLICT', detail: 'Idempotency-Key was used with a different request body' });
      expect(await agentsNamed(acme.organizationId, 'Body B')).toBe(0);
    });

    it('without the header, two identical requests create two agents', async () => {
      expect((await acme.rest.post('/api/agents', agentBody('No key'))).status).toBe(201);
      expect((await acme.rest.post('/api/agents', agentBody('No key'))).status).toBe(201);
      expect(await agentsNamed(acme.organizationId, 'No key')).toBe(2);
    });

    it.each([
      ['too long', 'k'.repeat(256)],
      ['not printable ASCII', 'clé-été'],
      ['empty', ''],
    ])('rejects a key that is %s with 400 naming the header', async (_, key) => {
      const bad = await fetch(`${app.baseUrl}/api/agents`, {
        method: 'POST',
        headers: { 'x-api-key': acme.apiKey, 'content-type': 'application/json', 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
        body: JSON.stringify(agentBody('Bad key')),
      });
      expect(bad.status).toBe(400);
      const problem = (await bad.json()) as { code: string; errors: { field: string }[] };
      expect(problem.code).toBe('BAD_USER_INPUT');
      expect(problem.errors.map((error) => error.field)).toEqual(['Idempotency-Key']);
      expect(await agentsNamed(acme.organizationId, 'Bad key')).toBe(0);
    });

    it('accepts a key of exactly 255 printable characters', async () => {
      const key = `${randomUUID()} ~!`.padEnd(255, 'x');
      expect((await withKey(acme, key).post('/api/agents', agentBody('Long key'))).status).toBe(201);
      expect((await withKey(acme, key).post('/api/agents', agentBody('Long key'))).headers.get('idempotent-replayed')).toBe('true');
    });

    it('keys belong to one organization: another organization using the same key creates its own agent', async () => {
      const key = randomUUID();
      const mine = await withKey(acme, key).post('/api/agents', agentBody('Shared key'));
      const theirs = await withKey(other, key).post('/api/agents', agentBody('Shared key'));
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(await agentsNamed(other.organizationId, 'Shared key')).toBe(1);
    });

    it('does not cache a failure: a 400 or a 404 from the handler leaves no record, and the fixed retry creates', async () => {
      const key = randomUUID();
      const invalid = await withKey(acme, key).post('/api/agents', { ...agentBody('Retried'), modelConfig: { model: 'nope' } });
      expect(invalid.status).toBe(400);
      const missingBase = await withKey(acme, key).post('/api/agents', { ...agentBody('Retried'), knowledgeBaseConfig: { knowledgeBaseId: randomUUID() } });
      expect(missingBase.status).toBe(404);
      expect((await idempotencyRows(acme.organizationId)).filter((row) => row.key === key)).toEqual([]);
      const fixed = await withKey(acme, key).post('/api/agents', agentBody('Retried'));
      expect(fixed.status).toBe(201);
      expect(fixed.headers.get('idempotent-replayed')).toBeNull();
      expect(await agentsNamed(acme.organizationId, 'Retried')).toBe(1);
    });

    it('concurrent requests with one key: exactly one creates, the others get 409 or the replay', async () => {
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 6 }, () => withKey(acme, key).post('/api/agents', agentBody('Raced'))));
      const created = answers.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null);
      expect(created).toHaveLength(1);
      for (const res of answers) {
        if (res.status === 201) expect(res.body.id).toBe(created[0]!.body.id);
        else expect(res.status).toBe(409);
      }
      expect(await agentsNamed(acme.organizationId, 'Raced')).toBe(1);
    });

    it('an expired record counts as absent: the key creates again and the old row is gone', async () => {
      const key = randomUUID();
      const first = await withKey(acme, key).post('/api/agents', agentBody('Expired'));
      await app.sql(`update idempotency_keys set expires_at = now() - interval '1 minute' where key = ?`, [key]);
      const second = await withKey(acme, key).post('/api/agents', agentBody('Expired'));
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBeNull();
      expect(second.body.id).not.toBe(first.body.id);
      const rows = (await idempotencyRows(acme.organizationId)).filter((row) => row.key === key);
      expect(rows).toHaveLength(1);
      expect(new Date(rows[0]!.expires_at as string).getTime() - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    });
  });

  describe('Idempotency-Key on the other creates', () => {
    it('POST /api/auth/api-keys: a replay answers 409 and the secret is stored nowhere', async () => {
      const key = randomUUID();
      const created = await withKey(acme, key).post('/api/auth/api-keys', { name: 'Idempotent key', prefix: 'idem' });
      expect(created.status).toBe(201);
      const secret = created.body.secret as string;
      expect(secret.length).toBeGreaterThan(32);
      const replay = await withKey(acme, key).post('/api/auth/api-keys', { name: 'Idempotent key', prefix: 'idem' });
      expect(replay.status).toBe(409);
      expect(replay.body.detail).toBe('the original response contained a secret shown only once; create a new key');
      expect(JSON.stringify(replay.body)).not.toContain(secret);
      const rows = await app.sql('select * from idempotency_keys');
      expect(rows.length).toBeGreaterThan(0);
      expect(JSON.stringify(rows)).not.toContain(secret);
      expect(JSON.stringify(rows)).not.toContain(secret.slice(-32));
      const [stored] = rows.filter((row) => row.key === key);
      expect(stored).toMatchObject({ status: 'completed', secret_omitted: true, response_status: 201 });
      expect(stored!.response_body).toMatchObject({ id: created.body.id, name: 'Idempotent key' });
      const [count] = await app.sql<{ count: number }>(`select count(*)::int as count from api_keys where name = 'Idempotent key'`);
      expect(count!.count).toBe(1);
    });

    it('POST /api/agents/{agentId}/conversations replays per agent path', async () => {
      const agentA = (await acme.rest.post('/api/agents', agentBody('Talker A'))).body.id;
      const agentB = (await acme.rest.post('/api/agents', agentBody('Talker B'))).body.id;
      const key = randomUUID();
      const first = await withKey(acme, key).post(`/api/agents/${agentA}/conversations`, { title: 'Hello' });
      const again = await withKey(acme, key).post(`/api/agents/${agentA}/conversations`, { title: 'Hello' });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      // The same key on another path is another request.
      const otherAgent = await withKey(acme, key).post(`/api/agents/${agentB}/conversations`, { title: 'Hello' });
      expect(otherAgent.headers.get('idempotent-replayed')).toBeNull();
      const [count] = await app.sql<{ count: number }>('select count(*)::int as count from conversations where agent_id = ?', [agentA]);
      expect(count!.count).toBe(1);
    });

    it('POST /api/programs/{id}/executions replays the execution, with no body sent', async () => {
      const campaign = await activeCampaign(acme, 2);
      const key = randomUUID();
      const first = await withKey(acme, key).post(`/api/programs/${campaign.programId}/executions`);
      const again = await withKey(acme, key).post(`/api/programs/${campaign.programId}/executions`);
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      const [count] = await app.sql<{ count: number }>('select count(*)::int as count from executions where program_id = ?', [campaign.programId]);
      expect(count!.count).toBe(1);
    });
  });
});
