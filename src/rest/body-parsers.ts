import { PassThrough, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../common/errors.js';

/**
 * The content codings a body may be sent in, one at most. Not zstd: a zstd frame names its own
 * window, and Node's decoder accepts up to 128 MB of it, so a few bytes could make each request
 * hold that much memory; gzip and deflate need 32 KB, brotli at most 16 MB.
 */
const BODY_CODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);
export const ACCEPTED_CODINGS = 'gzip, deflate, br';

function codingOf(req: Request): string {
  return String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
}

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
    const coding = codingOf(req);
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

/** A streamed body (an import's CSV), decoded as its Content-Encoding says; `discard` drops what is left of it, so a refusal can be answered. */
export type StreamedBody = Readable & { discard(): void };

/**
 * A raw body read as a stream (routes with `rawBody`), with the same codings as the parsers above:
 * decoded on the way (zlib runs on libuv's threads, off the event loop), so the size limits its
 * reader applies count the decoded bytes and a small bomb stops at them. A coding not taken → 415
 * with `Accept-Encoding`; a body that does not decode → 400 naming `body`, as the JSON door answers.
 */
export function streamedBody(req: Request, res: Response): StreamedBody {
  const coding = codingOf(req);
  if (coding === 'identity') return Object.assign(req, { discard: () => void req.resume() });
  if (!BODY_CODINGS.has(coding)) {
    res.setHeader('Accept-Encoding', ACCEPTED_CODINGS);
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding "${coding.slice(0, 40)}" is not taken: send the body as it is, or with one of ${ACCEPTED_CODINGS}`,
    );
  }
  const decoder = coding === 'gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : createBrotliDecompress();
  const decoded = new PassThrough();
  const discard = () => {
    req.unpipe(decoder);
    decoder.destroy();
    req.resume();
  };
  decoder.on('error', (error: NodeJS.ErrnoException) => {
    discard();
    const undecodable = typeof error.code === 'string' && error.code.startsWith('Z_');
    decoded.destroy(undecodable ? AppError.badInput([{ field: 'body', message: `The body does not decode as its Content-Encoding (${coding}) says` }]) : error);
  });
  req.on('close', () => {
    if (!req.complete) decoded.destroy(new Error('the request was cut off'));
  });
  // The reader may not be reading yet (the import is being created): it meets the error when it reads, from the stream's state.
  decoded.on('error', () => undefined);
  req.pipe(decoder).pipe(decoded);
  return Object.assign(decoded, { discard });
}
