import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config.js';

/** Paths that may carry a secret; pino replaces their values before anything is written. */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'secret',
  '*.secret',
  'apiKey',
  '*.apiKey',
  'accessToken',
  '*.accessToken',
];

/** Fields of database errors that repeat the statement and its values (a policy, a message, a key hash). */
const ERROR_FIELDS_WITH_DATA = ['query', 'params', 'where', 'sql', 'parameters', 'detail'];

function withoutData(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error) || depth > 3) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const field of ERROR_FIELDS_WITH_DATA) delete serialized[field];
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) serialized.cause = withoutData(cause, depth + 1);
  return serialized;
}

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, serializers: { err: withoutData } };
  return destination ? pino(options, destination) : pino(options);
}
