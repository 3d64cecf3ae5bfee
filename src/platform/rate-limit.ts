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
    const decision = tighter(await Promise.all(limits.map(async ([key, limit, scope]) => ({ ...(await options.limiter.take(key, limit)), scope }))));
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

/** One attempt a RefusalLimit admitted: it ends refused (counted) or passed (not counted), once, whichever comes first. */
export interface Attempt {
  /** Counts the refusal; answers the window's decision after it (undefined when it had already ended). */
  refused(): Promise<RateDecision | undefined>;
  passed(): void;
}

const ALWAYS: Attempt = { refused: async () => undefined, passed: () => undefined };

/**
 * RATE_LIMIT_ANONYMOUS_PER_MINUTE for the doors that count only what they refuse (the carriers'
 * webhooks, WebSocket upgrades, the operator door), per key. An attempt is admitted while the key's
 * refusals in the window and its attempts still being decided in this process are together under the
 * limit, checked and taken in one step after the limiter answers: a burst cannot pass the limit by
 * its own concurrency, each of its attempts seeing the count before any of them was refused.
 */
export class RefusalLimit {
  private readonly undecided = new Map<string, number>();

  /** `perMinute` 0: off, every attempt admitted. */
  constructor(
    private readonly limiter: RateLimiter,
    readonly perMinute: number,
  ) {}

  /** The key's new attempt, or the decision that refuses it. */
  async admit(key: string): Promise<{ attempt: Attempt } | { refusal: RateDecision }> {
    if (this.perMinute <= 0) return { attempt: ALWAYS };
    const decision = await this.limiter.peek(key, this.perMinute);
    // No await from here on: the count is read and the place taken in one step.
    const undecided = this.undecided.get(key) ?? 0;
    if (!decision.allowed) return { refusal: decision };
    if (this.perMinute - decision.remaining + undecided >= this.perMinute) {
      // Full of attempts still being decided: each ends within a request's time, so the wait is short.
      return { refusal: { ...decision, allowed: false, remaining: 0, resetSeconds: 1 } };
    }
    this.undecided.set(key, undecided + 1);
    let ended = false;
    const end = () => {
      const left = (this.undecided.get(key) ?? 1) - 1;
      if (left <= 0) this.undecided.delete(key);
      else this.undecided.set(key, left);
    };
    return {
      attempt: {
        refused: async () => {
          if (ended) return undefined;
          ended = true;
          // Counted before the place is given back, so the attempt is never out of both counts.
          try {
            return await this.limiter.take(key, this.perMinute);
          } finally {
            end();
          }
        },
        passed: () => {
          if (ended) return;
          ended = true;
          end();
        },
      },
    };
  }

  /** Attempts of `key` being decided now (tests). */
  pending(key: string): number {
    return this.undecided.get(key) ?? 0;
  }
}

/** Tells the request's refusal limit that it is not a stranger's (a webhook whose signature holds): it is never counted. */
export function vouchFor(res: Response): void {
  (res.locals.refusalAttempt as Attempt | undefined)?.passed();
}

export interface FailedRequestLimitOptions {
  refusals: RefusalLimit;
  /** The counter's key: the client IP's (`ip:<address>`, the doors' anonymous counter) unless a door has a bucket of its own. */
  bucket?: (req: Request) => string;
  /** What the bucket counts, for the refusal's message. */
  scope?: string;
  reject(req: Request, res: Response, error: AppError): void;
}

/**
 * The anonymous per-IP limit for the carrier webhooks (/telephony), on the same `ip:` counter as
 * the doors' (rateLimit above), and the operator door's on a bucket of its own. Twilio's real
 * traffic is many signed requests from a few of its addresses, and one busy campaign would pass any
 * per-IP limit meant for strangers: so only the requests answered 4xx (not signed with the
 * connection's token, forged, malformed, an unknown route) are counted, once answered, and a request
 * whose signature holds is vouched for (vouchFor) and never counted. Until then it holds a place
 * (RefusalLimit), so a burst of forgeries cannot pass the limit by arriving together. An address whose
 * counter is full is answered 429 before its request is read or its signature checked. Only a forger
 * failing that often from an address Twilio also sends from could get it refused for the rest of the
 * minute.
 */
export function failedRequestLimit(options: FailedRequestLimitOptions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = options.bucket ? options.bucket(req) : `ip:${clientIp(req)}`;
    const admitted = await options.refusals.admit(key);
    if ('refusal' in admitted) {
      const decision = admitted.refusal;
      res.setHeader('Retry-After', String(decision.resetSeconds));
      const message = `Too many refused requests: the limit is ${decision.limit} per minute per ${options.scope ?? 'client without credentials'}; retry in ${decision.resetSeconds} s`;
      options.reject(req, res, new AppError('RATE_LIMITED', message));
      return;
    }
    const { attempt } = admitted;
    // Gone while the limiter answered (Redis): its close has been and gone, so the place goes back now.
    if (res.closed) return attempt.passed();
    res.locals.refusalAttempt = attempt;
    const settle = () => {
      if (res.writableFinished && res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429) attempt.refused().catch(() => {});
      else attempt.passed();
    };
    res.once('finish', settle);
    res.once('close', settle);
    next();
  };
}
