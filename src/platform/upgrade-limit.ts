import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_TITLE, errorAnchor } from '../common/errors.js';
import type { RateDecision, RateLimiter } from './rate-limit.js';

/**
 * The HTTP door's anonymous per-IP limit (RATE_LIMIT_ANONYMOUS_PER_MINUTE) as a WebSocket upgrade
 * sees it: the same limiter and the same `ip:<address>` key, the address read as Express's req.ip.
 */
export interface UpgradeLimit {
  limiter: RateLimiter;
  /** 0 = off. */
  perMinute: number;
  clientIp(req: IncomingMessage): string;
}

const keyOf = (limit: UpgradeLimit, req: IncomingMessage) => `ip:${limit.clientIp(req)}`;

/**
 * Whether the upgrade's address is within the limit, counting nothing (an upgrade carries no
 * credentials yet, or is signed by a carrier: what fails later is counted, with countRefusal). Over
 * it, the upgrade is answered 429 here; when the limiter cannot answer, the socket is dropped.
 */
export async function admitUpgrade(limit: UpgradeLimit, req: IncomingMessage, socket: Duplex): Promise<boolean> {
  if (limit.perMinute <= 0) return true;
  let decision: RateDecision;
  try {
    decision = await limit.limiter.peek(keyOf(limit, req), limit.perMinute);
  } catch {
    socket.destroy();
    return false;
  }
  if (decision.allowed) return !socket.destroyed;
  refuseUpgrade(socket, decision);
  return false;
}

/** Counts a refused upgrade or a failed authentication on a socket against its address; undefined when the limit is off. */
export async function countRefusal(limit: UpgradeLimit, req: IncomingMessage): Promise<RateDecision | undefined> {
  return limit.perMinute > 0 ? limit.limiter.take(keyOf(limit, req), limit.perMinute) : undefined;
}

/** Answers an upgrade over the anonymous limit with 429 (problem+json, as the REST door answers it) and closes the socket. */
export function refuseUpgrade(socket: Duplex, decision: RateDecision): void {
  const detail = `Too many requests: the limit is ${decision.limit} per minute per client without credentials; retry in ${decision.resetSeconds} s`;
  const body = JSON.stringify({ type: `/docs/errors#${errorAnchor('RATE_LIMITED')}`, title: ERROR_TITLE.RATE_LIMITED, status: 429, detail, code: 'RATE_LIMITED', requestId: randomUUID() });
  socket.end(
    [
      'HTTP/1.1 429 Too Many Requests',
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `Retry-After: ${decision.resetSeconds}`,
      `RateLimit-Limit: ${decision.limit}`,
      `RateLimit-Remaining: ${decision.remaining}`,
      `RateLimit-Reset: ${decision.resetSeconds}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
