import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createGateway } from '../../src/app.js';
import { createLogger } from '../../src/common/logger.js';
import { RedisRateLimiter } from '../../src/platform/rate-limit-redis.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../support/pg-cluster.js';

/** Requests per minute per key in these tests. */
const LIMIT = 6;

const redisUrl = process.env.TEST_REDIS_URL;
// Shared counters need a Redis: CI starts one (.ci/run); elsewhere these are reported as skipped.
const withRedis = redisUrl ? describe : describe.skip;

withRedis('REDIS_URL: two gateways on one Redis hold one limit', () => {
  let app: TestApp;
  let second: { baseUrl: string; close(): Promise<void> };

  beforeAll(async () => {
    const rateLimit = { perMinute: LIMIT, anonymousPerMinute: 0, organizationPerMinute: 0, redisUrl };
    app = await startTestApp({ rateLimit });
    // A second gateway (its own process state and limiter) over the same database and Redis, as a replica.
    const gateway = await createGateway(app.config, app.db.database, createLogger('silent'));
    const server: Server = await new Promise((resolve) => {
      const listening = gateway.app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    second = {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async close() {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await gateway.stop();
      },
    };
  });
  afterAll(async () => {
    await second?.close();
    await app?.close();
  });

  it('counts one key across both replicas and both doors, then both answer 429', async () => {
    const org = await app.organization('Shared');
    const headers = { 'x-api-key': org.apiKey };
    const onFirst = app.rest(headers);
    const onSecond = (path: string) => fetch(`${second.baseUrl}${path}`, { headers });
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = i % 2 === 0 ? await onFirst.get('/api/users/me') : await onSecond('/api/users/me');
      expect(res.status).toBe(200);
      remaining.push(String(res.headers.get('ratelimit-remaining')));
    }
    // One window: 5 … 0 left, whichever replica answered (each alone would say 5, 5, 4, 4, 3, 3).
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);

    const first = await onFirst.get('/api/users/me');
    expect(first.status).toBe(429);
    expect(first.body.code).toBe('RATE_LIMITED');
    const graphql = await fetch(`${second.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { id } }' }),
    });
    expect(graphql.status).toBe(429);
    expect(Number(graphql.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await graphql.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('RATE_LIMITED');
  });
});

describe('REDIS_URL that does not answer', () => {
  it('fails open to the per-process limit, and logs the outage once, not per request', async () => {
    const entries: Record<string, unknown>[] = [];
    const closed = `redis://127.0.0.1:${await freePort()}`;
    const app = await startTestApp(
      { logLevel: 'warn', rateLimit: { perMinute: 3, anonymousPerMinute: 0, organizationPerMinute: 0, redisUrl: closed } },
      { write: (line: string) => void entries.push(JSON.parse(line) as Record<string, unknown>) },
    );
    try {
      const org = await app.organization('Offline');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        statuses.push((await org.rest.get('/api/users/me')).status);
        expect(Date.now() - started).toBeLessThan(2_000); // never waits on the lost Redis
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const outages = entries.filter((entry) => String(entry.msg).includes('Redis is unreachable'));
      expect(outages).toHaveLength(1);
      expect(outages[0]).toMatchObject({ level: 40 });
    } finally {
      await app.close();
    }
  });
});

withRedis('RedisRateLimiter.peek', () => {
  it('tells what take would answer without counting, on the shared counter', async () => {
    const limiter = new RedisRateLimiter(redisUrl!, createLogger('silent'), { keyPrefix: `peek-test-${Date.now()}` });
    await limiter.start();
    try {
      expect(await limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 2 });
      await limiter.take('ip:a', 2);
      expect(await limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 1 });
      await limiter.take('ip:a', 2);
      const full = await limiter.peek('ip:a', 2);
      expect(full).toMatchObject({ allowed: false, remaining: 0 });
      expect(full.resetSeconds).toBeGreaterThan(0);
      expect(full.resetSeconds).toBeLessThanOrEqual(60);
      expect(await limiter.peek('ip:b', 2)).toMatchObject({ allowed: true, remaining: 2 });
    } finally {
      await limiter.close();
    }
  });
});

describe('RedisRateLimiter.peek without Redis', () => {
  it('falls back to the process counter', async () => {
    const limiter = new RedisRateLimiter(`redis://127.0.0.1:${await freePort()}`, createLogger('silent'));
    await limiter.start();
    try {
      await limiter.take('ip:c', 1);
      expect(await limiter.peek('ip:c', 1)).toMatchObject({ allowed: false, remaining: 0 });
      expect(await limiter.peek('ip:d', 1)).toMatchObject({ allowed: true, remaining: 1 });
    } finally {
      await limiter.close();
    }
  });
});
