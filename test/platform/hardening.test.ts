import { CreateApiKeyDocument } from '../generated/graphql.js';
import { ConfigError, loadConfig, SANDBOX_ORIGINS } from '../../src/config.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
      expect([await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.2'), await anonymous(target, '203.0.113.3')]).toEqual([401, 401, 429]);
    } finally {
      await target.close();
    }
  });

  it('behind a trusted proxy, each client address has its own bucket', async () => {
    const trustProxy = loadConfig({ JWT_SECRET: 'x'.repeat(32), TRUST_PROXY: 'loopback' }).trustProxy;
    const target = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 2, organizationPerMinute: 0 }, trustProxy });
    try {
      expect([await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.1'), await anonymous(target, '203.0.113.1')]).toEqual([401, 401, 429]);
      expect(await anonymous(target, '203.0.113.2')).toBe(401);
    } finally {
      await target.close();
    }
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
