import { FixedWindowLimiter, WINDOW_MS } from './rate-limit.js';

describe('FixedWindowLimiter.peek', () => {
  it('answers what take would decide without counting, and the wait once the window is spent', () => {
    let now = 1_000_000;
    const limiter = new FixedWindowLimiter(() => now);
    expect(limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 2 });
    expect(limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 2 });
    limiter.take('ip:a', 2);
    expect(limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 1 });
    limiter.take('ip:a', 2);
    now += 15_000;
    expect(limiter.peek('ip:a', 2)).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 45 });
    expect(limiter.peek('ip:b', 2).allowed).toBe(true);
    now += WINDOW_MS;
    expect(limiter.peek('ip:a', 2)).toMatchObject({ allowed: true, remaining: 2 });
  });
});
