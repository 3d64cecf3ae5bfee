import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, ERROR_TITLE, errorAnchor } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';
import { logServerError } from '../common/logger.js';

/** Writes an RFC 9457 problem+json body; every REST error goes out through here. */
export function sendProblem(res: Response, error: AppError, requestId: string): void {
  const body = {
    // Relative to the gateway itself, which serves the page (src/rest/error-docs.ts).
    type: `/docs/errors#${errorAnchor(error.code)}`,
    title: ERROR_TITLE[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
    requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
  if (error.code === 'UNAVAILABLE') res.setHeader('Retry-After', '5');
  res.locals.errorCode = error.code; // counted by /metrics
  res.status(error.status).type('application/problem+json').send(JSON.stringify(body));
}

interface BodyParserError {
  type?: string;
  status?: number;
}

/**
 * Maps body-parser failures, AppErrors and ORM errors to problems; logs what was unexpected.
 * `send` writes the answer: problem+json by default; the GraphQL door passes its own shape.
 */
export function problemHandler(
  logger: Logger,
  send: (res: Response, error: AppError, requestId: string) => void = sendProblem,
): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const requestId = String(res.locals.requestId ?? '');
    const parserType = (error as BodyParserError)?.type;
    let appError: AppError;
    if (parserType === 'entity.parse.failed') {
      appError = AppError.badInput([{ field: 'body', message: 'The body is not valid JSON' }]);
    } else if (parserType === 'entity.too.large') {
      appError = new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than the configured limit');
    } else if (parserType?.startsWith('encoding.') || parserType === 'charset.unsupported') {
      appError = new AppError('BAD_USER_INPUT', 'The body encoding is not supported');
    } else if (error instanceof URIError) {
      appError = new AppError('BAD_USER_INPUT', 'The request path is not validly percent-encoded');
    } else {
      appError = toAppError(error);
    }
    if (res.locals.timedOut) return; // already answered 503; the late handler's failure is expected
    if (appError.logDetail) logger.info({ requestId, method: req.method, url: req.originalUrl, code: appError.code, ...appError.logDetail }, 'request refused');
    if (appError.status >= 500) {
      logServerError(logger, appError, (appError as { cause?: unknown }).cause ?? error, { requestId, method: req.method, url: req.originalUrl }, 'request failed');
    }
    if (res.headersSent) return;
    send(res, appError, requestId);
  };
}
