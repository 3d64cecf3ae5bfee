import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors.js';
import { principalOf } from './principal.js';

const WINDOW_MS = 60_000;

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

/**
 * Fixed one-minute windows counted in this process's memory: with several replicas each one
 * counts on its own, so the effective limit is the per-process limit times the replicas.
 */
export class FixedWindowLimiter {
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
  limiter: FixedWindowLimiter;
  /** Answers a refused request in the door's own shape. */
  reject(req: Request, res: Response, error: AppError): void;
}

/** Counts the request against its API key (or its client IP without valid credentials); sets RateLimit-* headers. */
export function rateLimit(options: RateLimitOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const { actor } = principalOf(res);
    const limit = actor ? options.perMinute : options.anonymousPerMinute;
    if (limit === 0) return next();
    const key = actor ? `key:${actor.apiKeyId}` : `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
    const decision = options.limiter.take(key, limit);
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    if (decision.allowed) return next();
    res.setHeader('Retry-After', String(decision.resetSeconds));
    options.reject(req, res, new AppError('RATE_LIMITED', `Too many requests: the limit is ${limit} per minute; retry in ${decision.resetSeconds} s`));
  };
}
