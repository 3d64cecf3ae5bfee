import { MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './webhook-schedule.js';

describe('the retry schedule', () => {
  const now = new Date('2026-01-01T00:00:00Z');

  it('waits 5 s after the first failure and gives up after the last attempt', () => {
    expect(nextAttemptAt(1, now, () => 0.5)!.getTime() - now.getTime()).toBe(5000);
    expect(nextAttemptAt(MAX_ATTEMPTS - 1, now, () => 0.5)).not.toBeNull();
    expect(nextAttemptAt(MAX_ATTEMPTS, now, () => 0.5)).toBeNull();
  });

  it('jitters each wait by at most 10% either way', () => {
    for (const [index, base] of RETRY_DELAYS_MS.entries()) {
      expect(nextAttemptAt(index + 1, now, () => 0)!.getTime() - now.getTime()).toBe(Math.round(base * 0.9));
      expect(nextAttemptAt(index + 1, now, () => 0.999999)!.getTime() - now.getTime()).toBeLessThanOrEqual(Math.round(base * 1.1));
    }
  });

  it('spans about 3 days in all', () => {
    const total = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
    expect(total / 3_600_000).toBeGreaterThan(60);
    expect(total / 3_600_000).toBeLessThan(72);
  });
});
