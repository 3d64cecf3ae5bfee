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

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
