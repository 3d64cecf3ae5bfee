import { AppError } from '../common/errors.js';

/** 1 to 255 printable ASCII characters. */
const KEY = /^[\x20-\x7e]{1,255}$/;

/** The Idempotency-Key header's value, or undefined when it was not sent; 400 when it is malformed. */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY.test(value)) {
    throw AppError.badInput([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' }]);
  }
  return value;
}
