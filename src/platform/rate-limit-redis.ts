import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { FixedWindowLimiter, WINDOW_MS, type RateDecision, type RateLimiter } from './rate-limit.js';

export interface RedisLimiterOptions {
  /** Prefix of every counter's key; replicas that share limits share it. */
  keyPrefix?: string;
  /** How long one Redis command may take before the request is counted in the process instead. */
  commandTimeoutMs?: number;
}

/**
 * One-minute windows counted in Redis (rate-limiter-flexible's atomic counters), so every replica
 * on one Redis holds one limit together. When Redis does not answer, requests fail open to this
 * process's own counters (the per-process limits still hold), logged once when it is lost and
 * once when it is back.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly limiters = new Map<number, RateLimiterRedis>();
  private readonly fallback = new FixedWindowLimiter();
  private readonly keyPrefix: string;
  private lost = false;

  constructor(
    url: string,
    private readonly logger: Logger,
    options: RedisLimiterOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? 'gateway:rate';
    const timeout = options.commandTimeoutMs ?? 500;
    // No offline queue and a short timeout: a request never waits on a lost Redis.
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeout,
      connectTimeout: 2_000,
    });
    // ioredis reports every failed reconnection; take() logs the outage once instead.
    this.redis.on('error', () => {});
  }

  /** Connects before the first request is counted; a Redis that does not answer is the outage take() handles. */
  async start(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      this.unreachable(error);
    }
  }

  async take(key: string, limit: number): Promise<RateDecision> {
    try {
      const result = await this.limiter(limit).consume(key);
      this.recovered();
      return decision(true, limit, result);
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        this.recovered();
        return decision(false, limit, error);
      }
      this.unreachable(error);
      return this.fallback.take(key, limit);
    }
  }

  async peek(key: string, limit: number): Promise<RateDecision> {
    try {
      const result = await this.limiter(limit).get(key);
      this.recovered();
      if (!result) return { allowed: true, limit, remaining: limit, resetSeconds: WINDOW_MS / 1000 };
      return decision(result.consumedPoints < limit, limit, result);
    } catch (error) {
      this.unreachable(error);
      return this.fallback.peek(key, limit);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /** One counter set per limit value: a key's points are its limit. */
  private limiter(limit: number): RateLimiterRedis {
    let limiter = this.limiters.get(limit);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.keyPrefix}:${limit}`,
        points: limit,
        duration: WINDOW_MS / 1000,
        rejectIfRedisNotReady: true,
      });
      this.limiters.set(limit, limiter);
    }
    return limiter;
  }

  private unreachable(error: unknown): void {
    if (this.lost) return;
    this.lost = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn({ reason }, 'Rate limit: Redis is unreachable; requests are counted in this process alone until it answers again');
  }

  private recovered(): void {
    if (!this.lost) return;
    this.lost = false;
    this.logger.info('Rate limit: Redis answers again; counters are shared across replicas');
  }
}

function decision(allowed: boolean, limit: number, result: RateLimiterRes): RateDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
  };
}
