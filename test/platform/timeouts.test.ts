import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { toAppError } from '../../src/common/error-mapping.js';
import { sendProblem } from '../../src/rest/problem.js';
import { requestTimeout } from '../../src/platform/request-timeout.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
