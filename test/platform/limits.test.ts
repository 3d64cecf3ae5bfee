import { MeDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { loadConfig } from '../../src/config.js';
import { FixedWindowLimiter } from '../../src/platform/rate-limit.js';

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
});
