import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config.js';
import type { AppError } from './errors.js';

/** Paths that may carry a secret; pino replaces their values before anything is written. */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  // Twilio's signature of a webhook or media-stream upgrade: with the request it names, a replayable credential.
  'req.headers["x-twilio-signature"]',
  'headers["x-twilio-signature"]',
  // Telnyx's Ed25519 signature of timestamp|body: a replayable credential within its window.
  'req.headers["telnyx-signature-ed25519"]',
  'headers["telnyx-signature-ed25519"]',
  'secret',
  '*.secret',
  'apiKey',
  '*.apiKey',
  'accessToken',
  '*.accessToken',
  // A carrier's auth token (carrier connections), in clear or sealed.
  'authToken',
  '*.authToken',
  'auth_token',
  '*.auth_token',
  'authTokenEncrypted',
  '*.authTokenEncrypted',
];

/**
 * Fields of errors that repeat what was sent: a database error's statement and its values (a policy,
 * a message, a key hash), a body-parser error's request body (`body`, up to the body limit, a form's
 * fields or a JSON document with whatever secret it carried).
 */
const ERROR_FIELDS_WITH_DATA = ['query', 'params', 'where', 'sql', 'parameters', 'detail', 'body'];

function withoutData(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error) || depth > 3) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const field of ERROR_FIELDS_WITH_DATA) delete serialized[field];
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) serialized.cause = withoutData(cause, depth + 1);
  return serialized;
}

export type LogFormat = 'pretty' | 'json';

/**
 * Pretty single lines for a person at a terminal in development; JSON lines for everything else
 * (a pipe, a file, a container's log, production), which log collectors parse.
 */
export function chooseLogFormat(stdoutIsTTY: boolean | undefined, nodeEnv: string): LogFormat {
  return stdoutIsTTY === true && nodeEnv === 'development' ? 'pretty' : 'json';
}

/** pino-pretty is loaded only when chosen, so a JSON-logging process never loads it. */
function prettyStream(): DestinationStream {
  const { PinoPretty } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return PinoPretty({ singleLine: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
}

/** How many bytes of JSON lines are gathered into one write of stdout, and how often what waits is written anyway. */
export const STDOUT_BATCH = { bytes: 4096, ms: 100 };

/**
 * stdout for JSON lines, written asynchronously and in batches by pino's own destination (SonicBoom):
 * lines gather until 4 KiB are waiting (`minLength`) and leave in one write, and every 100 ms
 * (`periodicFlush`) what waits is written anyway. Each write cost the request that made it as much as a
 * tenth of a REST list's CPU (the call into the file system, its completion), and one line per write is
 * what a loaded server made (docs/development/performance-journal.md, round three). pino registers the
 * destination for the process's exit (process.exit, the end of a shutdown, an uncaught error, and a
 * process that ends of itself, whose flush timer does not keep it alive) and writes what waits then,
 * synchronously. Only a process killed outright (SIGKILL, the OOM killer) can lose the lines of its last
 * moment.
 */
export function batchedStdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: STDOUT_BATCH.bytes, periodicFlush: STDOUT_BATCH.ms });
}

export function createLogger(level: LogLevel, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, serializers: { err: withoutData } };
  const stream = destination ?? (format === 'pretty' ? prettyStream() : batchedStdout());
  return pino(options, stream);
}

/**
 * A request answered 5xx. A lost database or provider (UNAVAILABLE, 503) is an outage the client is
 * told to retry: one warn line with its reason and the cause's name and code, since every request
 * fails alike while it lasts and a stack per request would bury everything else. Anything else is
 * a defect: an error with its stack.
 */
export function logServerError(logger: Logger, error: AppError, cause: unknown, fields: Record<string, unknown>, message: string): void {
  if (error.code === 'UNAVAILABLE') {
    // The cause's name and code, not its message: a driver's message can repeat the statement.
    const { name, code } = (cause ?? {}) as { name?: unknown; code?: unknown };
    logger.warn({ ...fields, code: error.code, reason: error.message, cause: { name, code } }, message);
  } else {
    logger.error({ ...fields, err: cause }, message);
  }
}

/** The paths the request line never logs (health checks: probes would drown the log). */
const UNLOGGED_PATHS = new Set(['/healthz', '/readyz']);

/**
 * The request log: one line per request when its answer is finished (or its connection closed first),
 * `GET /api/agents 200 12ms` with `req.method`, `req.url`, `res.statusCode`, `responseTime` (ms) and
 * `requestId`; at debug and trace the request's and answer's headers too (redacted by the logger's
 * paths). A request whose client went away before the answer was finished says `aborted: true`.
 *
 * Written here rather than with pino-http, which built two child loggers and a wrapped request object
 * for every request to print the same line: about a tenth of the CPU of a small request
 * (docs/development/performance-journal.md, round three). Nothing in the gateway used the per-request loggers it attached.
 */
export function requestLog(logger: Logger, requestIdOf: (res: ServerResponse) => unknown) {
  // The line at info holds fixed fields, none of them a redacted path: written without the redaction
  // pass, which cost ten times the rest of the line (about 12 against 1.5 µs). The detailed line, with
  // the headers, goes through it.
  const plain = logger.child({}, { redact: { paths: [] } });
  return (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: () => void): void => {
    const url = req.originalUrl ?? req.url ?? '';
    if (UNLOGGED_PATHS.has(url)) return next();
    const started = performance.now();
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const responseTime = Math.round(performance.now() - started);
      const detailed = logger.isLevelEnabled('debug');
      const line: Record<string, unknown> = {
        req: detailed ? pino.stdSerializers.req(req) : { method: req.method, url },
        requestId: requestIdOf(res),
        res: detailed ? pino.stdSerializers.res(res) : { statusCode: res.statusCode },
        responseTime,
      };
      if (!res.writableFinished) line.aborted = true;
      (detailed ? logger : plain).info(line, `${req.method} ${url} ${res.statusCode} ${responseTime}ms`);
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
