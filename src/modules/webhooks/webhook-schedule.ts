const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The wait after each failed attempt (the first is sent at once): 5 s, 5 min, 30 min, 2 h, 5 h, then
 * 10 h six times — 12 attempts over about 2.8 days (±10% jitter each), then the delivery is failed.
 */
export const RETRY_DELAYS_MS = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
  10 * HOUR,
] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/** When attempt `attempt + 1` is due after attempt `attempt` (1-based) failed at `now`; null when it was the last. */
export function nextAttemptAt(attempt: number, now: Date, random: () => number = Math.random): Date | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const jitter = 0.9 + 0.2 * random();
  return new Date(now.getTime() + Math.round(base * jitter));
}
