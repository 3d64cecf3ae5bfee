import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_TITLE, errorAnchor } from '../common/errors.js';
import type { Attempt, RateDecision, RefusalLimit } from './rate-limit.js';

/**
 * The HTTP door's anonymous per-IP limit (RATE_LIMIT_ANONYMOUS_PER_MINUTE) as a WebSocket upgrade
 * sees it: the same limiter and the same `ip:<address>` key, the address read as Express's req.ip,
 * and the same RefusalLimit as the carriers' webhooks, so attempts still being decided count too.
 */
export interface UpgradeLimit {
  refusals: RefusalLimit;
  clientIp(req: IncomingMessage): string;
}

/**
 * Admits an upgrade, counting nothing yet (it carries no credentials yet, or is signed by a carrier):
 * its attempt holds a place until it is decided, refused (counted: a failed connection_init, a forged
 * media stream) or passed (authenticated, signed), and is passed at the latest when its socket
 * closes. Over the limit, the upgrade is answered 429 here; when the limiter cannot answer, the
 * socket is dropped. Null when it was not admitted.
 */
export async function admitUpgrade(limit: UpgradeLimit, req: IncomingMessage, socket: Duplex): Promise<Attempt | null> {
  let admitted: Awaited<ReturnType<RefusalLimit['admit']>>;
  try {
    admitted = await limit.refusals.admit(`ip:${limit.clientIp(req)}`);
  } catch {
    socket.destroy();
    return null;
  }
  if ('refusal' in admitted) {
    refuseUpgrade(socket, admitted.refusal);
    return null;
  }
  if (socket.destroyed) {
    admitted.attempt.passed();
    return null;
  }
  socket.once('close', () => admitted.attempt.passed());
  return admitted.attempt;
}

/** Answers an upgrade over the anonymous limit with 429 (problem+json, as the REST door answers it) and closes the socket. */
export function refuseUpgrade(socket: Duplex, decision: RateDecision): void {
  const detail = `Too many requests: the limit is ${decision.limit} per minute per client without credentials; retry in ${decision.resetSeconds} s`;
  const body = JSON.stringify({
    type: `/docs/errors#${errorAnchor('RATE_LIMITED')}`,
    title: ERROR_TITLE.RATE_LIMITED,
    status: 429,
    detail,
    code: 'RATE_LIMITED',
    requestId: randomUUID(),
  });
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
