import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, ERROR_TITLE, errorAnchor } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';
import { logServerError } from '../common/logger.js';
import { abortSignalOf, clientWentAway } from '../platform/request-timeout.js';
import { ACCEPTED_CODINGS } from './body-parsers.js';

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
  statusCode?: number;
}

/** body-parser's failures by their `type`: each is the client's (4xx), never a 500 with the body in the log. */
const PARSER_ERRORS: Record<string, AppError> = {
  'entity.too.large': new AppError('PAYLOAD_TOO_LARGE', 'The body is larger than the configured limit'),
  'parameters.too.many': new AppError('BAD_USER_INPUT', 'The form has more fields than allowed'),
  'depth.exceeded': new AppError('BAD_USER_INPUT', 'The form nests deeper than allowed'),
  'request.aborted': new AppError('BAD_USER_INPUT', 'The body ended before it was complete'),
  'request.size.invalid': new AppError('BAD_USER_INPUT', 'The body is not as long as its content-length says'),
  'entity.verify.failed': new AppError('BAD_USER_INPUT', 'The body was refused'),
  'charset.unsupported': new AppError('BAD_USER_INPUT', 'The body encoding is not supported'),
};

/** The 4xx for a body-parser failure, or undefined when the error is not one (or is the server's own: stream.*). */
export function parserError(error: unknown, form: boolean): AppError | undefined {
  const { type, status, statusCode } = (error ?? {}) as BodyParserError;
  if (typeof type !== 'string') return undefined;
  if (type === 'entity.parse.failed') {
    return form
      ? new AppError('BAD_USER_INPUT', 'The body is not a valid form')
      : AppError.badInput([{ field: 'body', message: 'The body is not valid JSON' }]);
  }
  // The content coding (src/rest/body-parsers.ts): one we do not take, or a body that does not decode as it says.
  const coding = (error as { encoding?: unknown }).encoding;
  if (type === 'encoding.unsupported' && typeof coding === 'string') {
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding "${coding.slice(0, 40)}" is not taken: send the body as it is, or with one of ${ACCEPTED_CODINGS}`,
    );
  }
  if (type === 'encoding.undecodable') {
    return new AppError('BAD_USER_INPUT', `The body does not decode as its Content-Encoding (${String(coding).slice(0, 40)}) says`);
  }
  const known = Object.hasOwn(PARSER_ERRORS, type) ? PARSER_ERRORS[type] : type.startsWith('encoding.') ? PARSER_ERRORS['charset.unsupported'] : undefined;
  if (known) return new AppError(known.code, known.message);
  // A type we do not know yet, that body-parser itself calls the client's: still a 400.
  const given = status ?? statusCode;
  return typeof given === 'number' && given >= 400 && given < 500 ? new AppError('BAD_USER_INPUT', 'The body could not be read') : undefined;
}

/**
 * Maps body-parser failures, AppErrors and ORM errors to problems; logs what was unexpected.
 * `send` writes the answer: problem+json by default; the GraphQL door passes its own shape.
 */
export function problemHandler(logger: Logger, send: (res: Response, error: AppError, requestId: string) => void = sendProblem): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const requestId = String(res.locals.requestId ?? '');
    let appError: AppError;
    const parsed = parserError(error, Boolean(req.is('application/x-www-form-urlencoded')));
    if (parsed) {
      appError = parsed;
    } else if (error instanceof URIError) {
      appError = new AppError('BAD_USER_INPUT', 'The request path is not validly percent-encoded');
    } else {
      appError = toAppError(error);
    }
    if (res.locals.timedOut) return; // already answered 503; the late handler's failure is expected
    if (clientWentAway(abortSignalOf(res))) return; // nobody to answer; the request's log line says aborted
    if (appError.logDetail) logger.info({ requestId, method: req.method, url: req.originalUrl, code: appError.code, ...appError.logDetail }, 'request refused');
    if (appError.status >= 500) {
      logServerError(
        logger,
        appError,
        (appError as { cause?: unknown }).cause ?? error,
        { requestId, method: req.method, url: req.originalUrl },
        'request failed',
      );
    }
    if (res.headersSent) return;
    send(res, appError, requestId);
  };
}
