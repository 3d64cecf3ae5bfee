import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isBlockedAddress, WebhookAddressError } from './webhook-address.js';

export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** Why the address was refused, when `error` says only that it was: for the operator's log, never stored. */
  refusedBecause?: string;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * POSTs one signed delivery. The host is resolved, every address checked and the socket given only
 * the checked ones (DNS rebinding finds nothing to switch); redirects are not followed (a 3xx is a
 * failure); the whole exchange is bounded by `timeoutMs`.
 */
export function sendDelivery(target: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      resolve({ statusCode: null, latencyMs: 0, error: 'The endpoint URL does not parse' });
      return;
    }
    if (!options.allowPrivate && url.protocol !== 'https:') {
      resolve({ statusCode: null, latencyMs: 0, error: 'Refused: the endpoint URL is not https' });
      return;
    }
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivate && isIP(literal) && isBlockedAddress(literal)) {
      resolve({ statusCode: null, latencyMs: 0, error: `Refused: ${literal} is a private, loopback, link-local or reserved address` });
      return;
    }
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'telephony-agent-gateway-webhooks',
        },
        lookup: guardedLookup(options.allowPrivate),
        agent: false,
      },
      (res) => {
        const statusCode = res.statusCode ?? null;
        // The body is not needed; read it away (bounded by the same timeout) so the exchange ends cleanly.
        res.resume();
        res.on('end', () => {
          const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
          finish({ statusCode, latencyMs: elapsed(), error: ok ? null : `The endpoint answered ${statusCode}` });
        });
        res.on('error', (error) => finish({ statusCode, latencyMs: elapsed(), error: `The answer broke off: ${error.message}` }));
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, latencyMs: elapsed(), error: `No answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        error instanceof WebhookAddressError
          ? { statusCode: null, latencyMs: elapsed(), error: error.message, refusedBecause: error.detail }
          : { statusCode: null, latencyMs: elapsed(), error: `Could not deliver: ${error.message}` },
      ),
    );
    req.end(body);
  });
}
