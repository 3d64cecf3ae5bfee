import { Webhook } from 'standardwebhooks';
import { OutboundError, outboundRequest, readCapped, toldOf } from './outbound-request.js';
import { TOOL_LIMITS } from './tool-limits.js';

/** What one tool request came back with. */
export interface ToolAnswer {
  ok: boolean;
  statusCode: number | null;
  /** The answer: parsed JSON when it says it is JSON and parses, else its text (at most TOOL_LIMITS.answerBytes of it). */
  answer: unknown;
  /** The answer as text (what the record keeps, cut). */
  text: string | null;
  /** The answer was longer than TOOL_LIMITS.answerBytes: the connection was closed past them. */
  truncated: boolean;
  /** What went wrong, in words the model may say to the caller's face (no address, no secret). */
  error: string | null;
  /** Why a request was refused, for the operator's log only. */
  refusedBecause?: string;
}

export interface HttpToolRequest {
  url: string;
  method: string;
  /** The tool's own headers, opened. */
  headers: Record<string, string>;
  /** The signing secrets, current first (the one before a rotation during its overlap). */
  secrets: string[];
  timeoutMs: number;
  /** webhook-id: the tool call's own id, so the business can tell a call from a retry of it. */
  messageId: string;
  body: string;
}

/**
 * Sends one HTTP tool request, signed as webhook deliveries are (Standard Webhooks: webhook-id,
 * webhook-timestamp, webhook-signature with each secret), under the outbound rules and one deadline
 * over the whole exchange. Never throws: every failure is an answer the model is told.
 */
export async function sendToolRequest(request: HttpToolRequest, allowPrivate: boolean): Promise<ToolAnswer> {
  const sentAt = new Date();
  const signature = request.secrets.map((secret) => new Webhook(secret).sign(request.messageId, sentAt, request.body)).join(' ');
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const failed = (error: string, statusCode: number | null = null, refusedBecause?: string): ToolAnswer => ({
    ok: false,
    statusCode,
    answer: null,
    text: null,
    truncated: false,
    error,
    refusedBecause,
  });
  try {
    const res = await outboundRequest(
      request.url,
      {
        method: request.method,
        headers: {
          ...request.headers,
          'content-type': 'application/json',
          accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
          'webhook-id': request.messageId,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: request.body,
      },
      { allowPrivate, deadline, maxBytes: TOOL_LIMITS.answerBytes },
    );
    const statusCode = res.statusCode ?? null;
    const { body, truncated } = await readCapped(res, TOOL_LIMITS.answerBytes, deadline);
    const text = body.toString('utf8');
    if (statusCode === null || statusCode < 200 || statusCode >= 300) {
      const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400 ? ' (a redirect, which is not followed)' : '';
      return { ...failed(`the tool answered HTTP ${statusCode}${redirect}`, statusCode), text: text || null, truncated };
    }
    let answer: unknown = text;
    if (!truncated && /\bjson\b/i.test(String(res.headers['content-type'] ?? ''))) {
      try {
        answer = JSON.parse(text);
      } catch {
        // Said JSON and was not: the model gets the text.
      }
    }
    return { ok: true, statusCode, answer, text, truncated, error: null };
  } catch (error) {
    if (error instanceof OutboundError) {
      if (error.kind === 'timeout') return failed(`the tool did not answer within ${request.timeoutMs} ms`);
      if (error.kind === 'refused') return failed(`the tool's address was refused (${error.message.replace(/^Refused: /, '')})`, null, error.detail);
      return failed(toldOf('the tool', error));
    }
    return failed(`the tool could not be called (${error instanceof Error ? error.name : 'error'})`);
  }
}
