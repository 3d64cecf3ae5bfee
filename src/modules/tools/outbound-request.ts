import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { ADDRESS_REFUSED, guardedLookup, isBlockedAddress, WebhookAddressError } from '../webhooks/webhook-address.js';

/** Why an outbound request got no usable answer; `message` is what the tenant (and its model) may be told. */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'timeout' | 'too_large' | 'unreachable',
    /** The reason behind a refusal, for the operator's log only (no DNS oracle for the tenant). */
    readonly detail: string = message,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundLimits {
  /** TOOLS_ALLOW_PRIVATE: http, and private, loopback and link-local addresses. */
  allowPrivate: boolean;
  /** Ends the whole exchange (connect, send, every byte of the answer) when it aborts: one deadline, not one per read. */
  deadline: AbortSignal;
  /** Bytes of an answer read at most: past them the connection is closed. */
  maxBytes: number;
}

/** An OutboundError's words with `who` as their subject ("it could not be reached" → "the tool could not be reached"). */
export function toldOf(who: string, error: OutboundError): string {
  return error.message.replace(/^its /, `${who}'s `).replace(/^it /, `${who} `);
}

/** The deadline's error: the signal's own reason when it is an OutboundError, else a timeout. */
function deadlineError(signal: AbortSignal): OutboundError {
  return signal.reason instanceof OutboundError ? signal.reason : new OutboundError('it did not answer in time', 'timeout');
}

/**
 * Opens one request under the webhooks' address rules: the host resolved once, every address
 * checked and the socket given only the checked ones (webhook-address.ts guardedLookup), so a DNS
 * rebinding between check and connect finds nothing to switch; a literal private address refused
 * before any socket; no redirect followed (a 3xx is the answer). The deadline destroys the request
 * and its answer wherever they are. Resolves with the answer's head; its body is still to be read.
 */
export function outboundRequest(
  target: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  limits: OutboundLimits,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      reject(new OutboundError('its URL does not parse', 'refused'));
      return;
    }
    if (url.protocol !== 'https:' && !(limits.allowPrivate && url.protocol === 'http:')) {
      reject(new OutboundError(`Refused: ${ADDRESS_REFUSED}`, 'refused', `the URL is ${url.protocol}, not https`));
      return;
    }
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (!limits.allowPrivate && isIP(literal) && isBlockedAddress(literal)) {
      reject(new OutboundError(`Refused: ${ADDRESS_REFUSED}`, 'refused', `${literal} is a private, loopback, link-local or reserved address`));
      return;
    }
    if (limits.deadline.aborted) {
      reject(deadlineError(limits.deadline));
      return;
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { ...init.headers, 'user-agent': 'telephony-agent-gateway-tools' };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const req = send(url, { method: init.method, headers, lookup: guardedLookup(limits.allowPrivate), agent: false });
    const onDeadline = () => req.destroy(deadlineError(limits.deadline));
    limits.deadline.addEventListener('abort', onDeadline, { once: true });
    const release = () => limits.deadline.removeEventListener('abort', onDeadline);
    req.on('response', (res) => {
      res.once('close', release);
      resolve(res);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      release();
      if (error instanceof OutboundError) reject(error);
      else if (error instanceof WebhookAddressError) reject(new OutboundError(error.message, 'refused', error.detail));
      else reject(new OutboundError(`it could not be reached (${error.code ?? error.message})`, 'unreachable'));
    });
    req.end(init.body);
  });
}

/**
 * An answer's body, at most `maxBytes`: past them the connection is closed and what came is kept,
 * marked truncated. The deadline (outboundRequest's) still ends a body that trickles.
 */
export async function readCapped(res: IncomingMessage, maxBytes: number, deadline: AbortSignal): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve, reject) => {
    res.on('data', (chunk: Buffer) => {
      const room = maxBytes - size;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        size = maxBytes;
        res.destroy();
        resolve({ body: Buffer.concat(chunks), truncated: true });
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    res.on('end', () => resolve({ body: Buffer.concat(chunks), truncated: false }));
    const broke = (error?: Error) =>
      reject(
        deadline.aborted
          ? deadlineError(deadline)
          : error instanceof OutboundError
            ? error
            : new OutboundError(`its answer broke off${error ? ` (${error.message})` : ''}`, 'unreachable'),
      );
    res.on('error', broke);
    res.on('close', () => {
      if (!res.complete && size < maxBytes) broke();
    });
  });
}

/** Statuses whose answer has no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for a client library (the MCP SDK's transport) that goes through outboundRequest: the
 * address rules, the deadline over every request of one operation, and a body that errors (the
 * connection closed) past `maxBytes`. A GET is answered 405 here: the gateway takes a server's
 * answers on the streams of its own POSTs and listens for nothing else, so no long-lived stream is opened.
 */
export function guardedFetch(limits: OutboundLimits): typeof fetch {
  return async (input, init) => {
    const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = typeof init?.body === 'string' ? init.body : init?.body == null ? undefined : String(init.body);
    const signals = init?.signal ? AbortSignal.any([limits.deadline, init.signal]) : limits.deadline;
    const res = await outboundRequest(target, { method, headers, body }, { ...limits, deadline: signals });
    const status = res.statusCode ?? 502;
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    if (NO_BODY.has(status)) {
      res.resume();
      return new Response(null, { status, headers: answerHeaders });
    }
    let size = 0;
    const capped = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > limits.maxBytes) {
          res.destroy();
          done(new OutboundError(`its answer is larger than ${limits.maxBytes} bytes`, 'too_large'));
          return;
        }
        done(null, chunk);
      },
    });
    res.on('error', (error) => capped.destroy(limits.deadline.aborted ? deadlineError(limits.deadline) : error));
    res.pipe(capped);
    return new Response(Readable.toWeb(capped) as ReadableStream<Uint8Array>, {
      status: status < 200 || status > 599 ? 502 : status,
      statusText: res.statusMessage,
      headers: answerHeaders,
    });
  };
}
