import { MeDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { FixedWindowLimiter } from '../../src/platform/rate-limit.js';

const PER_KEY = 5;
const ANONYMOUS = 3;

let app: TestApp;
let acme: TestOrganization;
let globex: TestOrganization;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: { perMinute: PER_KEY, anonymousPerMinute: ANONYMOUS } });
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

describe('RATE_LIMIT_PER_MINUTE=0', () => {
  it('turns the limit off: no headers, no 429', async () => {
    const open = await startTestApp({ rateLimit: { perMinute: 0, anonymousPerMinute: 0 } });
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
