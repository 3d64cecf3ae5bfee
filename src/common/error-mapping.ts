import {
  ConnectionException,
  DriverException,
  NotFoundError,
  UniqueConstraintViolationException,
  ForeignKeyConstraintViolationException,
} from '@mikro-orm/core';
import { CredentialsError } from '../platform/credentials.js';
import { AppError } from './errors.js';

/**
 * Turns anything thrown below a door into an AppError: ORM "not found" → NOT_FOUND,
 * unique clashes → CONFLICT, a lost database → UNAVAILABLE, a stored secret that does not open with
 * CREDENTIALS_KEY → UNAVAILABLE (the operator's to fix; the client retries later). Unknown errors stay
 * INTERNAL_SERVER_ERROR and keep their cause for the log.
 */
export function toAppError(error: unknown): AppError & { cause?: unknown } {
  if (error instanceof AppError) return error;
  if (error instanceof NotFoundError) return AppError.notFound('Record');
  if (error instanceof UniqueConstraintViolationException) {
    return new AppError('CONFLICT', 'A record with the same unique value already exists');
  }
  if (error instanceof ForeignKeyConstraintViolationException) {
    return new AppError('CONFLICT', 'The record is still referenced by other records');
  }
  if (error instanceof DriverException && error.code === '22001') {
    return new AppError('BAD_USER_INPUT', 'A value in the request is longer than can be stored');
  }
  if (error instanceof DriverException && error.code && UNSTORABLE_VALUE_CODES.has(error.code)) {
    return new AppError('BAD_USER_INPUT', 'A value in the request cannot be stored (out of range or not valid text)');
  }
  if (error instanceof CredentialsError) {
    return Object.assign(new AppError('UNAVAILABLE', 'Stored credentials cannot be opened with the server’s key right now; try again later'), { cause: error });
  }
  if (error instanceof ConnectionException || isConnectionFailure(error)) {
    return Object.assign(new AppError('UNAVAILABLE', 'The database is unreachable; try again shortly'), { cause: error });
  }
  return Object.assign(new AppError('INTERNAL_SERVER_ERROR', 'An unexpected error occurred'), { cause: error });
}

/** SQLSTATEs for a value the database refuses: a backstop behind validation, never a 500. */
const UNSTORABLE_VALUE_CODES = new Set(['22P05', '22021', '22P02', '22003', '22007', '22008', '54000']);

// 57014: cancelled by statement_timeout — an overloaded database, worth retrying like a lost one.
// 57P02: the backend was ended because another one crashed (the server restarts).
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08001', '57014']);

function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  // pg's "… is not queryable": a statement (often the COMMIT) sent on a connection that was lost earlier in the request.
  return typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|is not queryable/i.test(message);
}
