import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors.js';
import { principalOf } from './principal.js';

export const WINDOW_MS = 60_000;

interface Window {
  startedAt: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/** Where the counters live: this process's memory, or Redis shared by every replica. */
export interface RateLimiter {
  take(key: string, limit: number): RateDecision | Promise<RateDecision>;
  /** What take would decide now, without counting anything (a WebSocket upgrade, whose credentials come later). */
  peek(key: string, limit: number): RateDecision | Promise<RateDecision>;
  start?(): Promise<void>;
  close?(): Promise<void>;
}

/**
 * Fixed one-minute windows counted in this process's memory: with several replicas each one
 * counts on its own, so the effective limit is the per-process limit times the replicas
 * (REDIS_URL shares them: see rate-limit-redis.ts).
 */
export class FixedWindowLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  take(key: string, limit: number): RateDecision {
    const now = this.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= WINDOW_MS) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    const allowed = window.count < limit;
    if (allowed) window.count += 1;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000)),
    };
  }

  peek(key: string, limit: number): RateDecision {
    const now = this.now();
    const window = this.windows.get(key);
    const count = window && now - window.startedAt < WINDOW_MS ? window.count : 0;
    return {
      allowed: count < limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: window && count > 0 ? Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000)) : Math.ceil(WINDOW_MS / 1000),
    };
  }

  /** Drops expired windows now and then, so idle keys and IPs do not pile up. */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) {
      if (now - window.startedAt >= WINDOW_MS) this.windows.delete(key);
    }
  }
}

export interface RateLimitOptions {
  perMinute: number;
  anonymousPerMinute: number;
  /** All the keys of one organization together; 0 = off. */
  organizationPerMinute: number;
  limiter: RateLimiter;
  /** Answers a refused request in the door's own shape. */
  reject(req: Request, res: Response, error: AppError): void;
}

type Scoped = RateDecision & { scope: string };

/** The decision to report: a refusal first (the longest wait), else the one with the fewest requests left. */
function tighter(decisions: Scoped[]): Scoped {
  const refused = decisions.filter((decision) => !decision.allowed);
  if (refused.length > 0) return refused.reduce((a, b) => (b.resetSeconds > a.resetSeconds ? b : a));
  return decisions.reduce((a, b) => (b.remaining < a.remaining ? b : a));
}

/**
 * Counts the request against its API key and its organization (or its client IP without valid
 * credentials); RateLimit-* headers report the tighter of the two.
 */
export function rateLimit(options: RateLimitOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { actor } = principalOf(res);
    const counted: [key: string, limit: number, scope: string][] = actor
      ? [
          [`key:${actor.apiKeyId}`, options.perMinute, 'API key'],
          [`org:${actor.organizationId}`, options.organizationPerMinute, 'organization'],
        ]
      : [[`ip:${clientIp(req)}`, options.anonymousPerMinute, 'client without credentials']];
    const limits = counted.filter(([, limit]) => limit > 0);
    if (limits.length === 0) return next();
    const decision = tighter(
      await Promise.all(limits.map(async ([key, limit, scope]) => ({ ...(await options.limiter.take(key, limit)), scope }))),
    );
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    if (decision.allowed) return next();
    res.setHeader('Retry-After', String(decision.resetSeconds));
    const message = `Too many requests: the limit is ${decision.limit} per minute per ${decision.scope}; retry in ${decision.resetSeconds} s`;
    options.reject(req, res, new AppError('RATE_LIMITED', message));
  };
}

/** The client's address as the anonymous limit counts it (req.ip follows TRUST_PROXY). */
function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

export interface FailedRequestLimitOptions {
  /** RATE_LIMIT_ANONYMOUS_PER_MINUTE; 0 = off. */
  perMinute: number;
  limiter: RateLimiter;
  reject(req: Request, res: Response, error: AppError): void;
}

/**
 * The anonymous per-IP limit for the carrier webhooks (/telephony), on the same `ip:` counter as
 * the doors' (rateLimit above). Twilio's real traffic is many signed requests from a few of its
 * addresses, and one busy campaign would pass any per-IP limit meant for strangers: so only the
 * requests answered 4xx (not signed with the connection's token, forged, malformed, an unknown
 * route) are counted, once answered. An address whose counter is full is answered 429 before its
 * request is read or its signature checked. A signed request is never counted, so Twilio is not
 * slowed by its own traffic; only a forger failing that often from an address Twilio also sends
 * from could get it refused for the rest of the minute. Requests that arrive together are all
 * checked before any of them is counted: a burst can pass the limit by its own concurrency.
 */
export function failedRequestLimit(options: FailedRequestLimitOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (options.perMinute <= 0) return next();
    const key = `ip:${clientIp(req)}`;
    const decision = await options.limiter.peek(key, options.perMinute);
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(decision.resetSeconds));
      const message = `Too many refused requests: the limit is ${decision.limit} per minute per client without credentials; retry in ${decision.resetSeconds} s`;
      options.reject(req, res, new AppError('RATE_LIMITED', message));
      return;
    }
    res.once('finish', () => {
      if (res.statusCode < 400 || res.statusCode >= 500 || res.statusCode === 429) return;
      Promise.resolve(options.limiter.take(key, options.perMinute)).catch(() => {});
    });
    next();
  };
}
