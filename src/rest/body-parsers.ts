import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * The content codings a body may be sent in, one at most. Not zstd: a zstd frame names its own
 * window, and Node's decoder accepts up to 128 MB of it, so a few bytes could make each request
 * hold that much memory; gzip and deflate need 32 KB, brotli at most 16 MB.
 */
const BODY_CODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);
export const ACCEPTED_CODINGS = 'gzip, deflate, br';

/** As body-parser decides it: a body is coming when it is chunked or has a length. */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

interface ParserFailure {
  type?: unknown;
  status?: number;
  statusCode?: number;
  encoding?: string;
}

/**
 * A body-parser with the body's Content-Encoding checked first, and its decoding failures named: a
 * coding it does not take is refused with 415 and `Accept-Encoding` (RFC 9110 §15.5.16) before the
 * body is read, and a body that does not decompress as its coding says (body-parser passes zlib's
 * error on with status 400 and no `type`) is typed `encoding.undecodable`, which each door answers
 * 400 BAD_USER_INPUT (`parserError`), counted as any refusal, never a 500 with a stack in the log.
 */
function decoding(parser: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const coding = String(req.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (!BODY_CODINGS.has(coding) && hasBody(req)) {
      res.setHeader('Accept-Encoding', ACCEPTED_CODINGS);
      next(Object.assign(new Error(`unsupported content encoding "${coding}"`), { type: 'encoding.unsupported', status: 415, encoding: coding }));
      return;
    }
    parser(req, res, (error?: unknown) => {
      const failure = error as ParserFailure | undefined;
      if (failure && typeof failure === 'object' && failure.type === undefined && (failure.status ?? failure.statusCode) === 400 && coding !== 'identity') {
        Object.assign(failure, { type: 'encoding.undecodable', encoding: coding });
      }
      next(error);
    });
  };
}

/** express.json with the checks above. */
export function jsonBody(options: Parameters<typeof express.json>[0]): RequestHandler {
  return decoding(express.json(options));
}

/** express.urlencoded (the carriers' forms) with the checks above. */
export function formBody(options: Parameters<typeof express.urlencoded>[0]): RequestHandler {
  return decoding(express.urlencoded(options));
}

/** express.text (a carrier's JSON body kept as sent, for a signature over its bytes) with the checks above. */
export function textBody(options: Parameters<typeof express.text>[0]): RequestHandler {
  return decoding(express.text(options));
}
