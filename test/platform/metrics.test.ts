import type { AddressInfo } from 'node:net';
import { MeDocument } from '../generated/graphql.js';
import { QUEUE_DEPTH_SQL } from '../../src/platform/metrics.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`${name}{`) && wanted.every((part) => row.slice(0, row.indexOf('}') + 1).includes(part)));
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
    if (app.db.database.kind === 'pglite') expect(text).not.toContain('db_pool_connections{');
    else expect(text).toMatch(/^db_pool_connections\{state="total"\} \d+$/m);
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
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: `Basic ${METRICS_TOKEN}` }, { 'x-api-key': acme.apiKey }]) {
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
