import type { TransformFnParams } from 'class-transformer';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * REST bodies carry dates as ISO 8601 strings; GraphQL has already parsed them. A string that
 * is not ISO 8601 becomes an Invalid Date so that @IsDate rejects it with the field's name.
 */
export function toDate({ value }: TransformFnParams): unknown {
  if (typeof value !== 'string') return value;
  return ISO_DATE_TIME.test(value) ? new Date(value) : new Date(Number.NaN);
}
