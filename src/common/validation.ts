import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validate, ValidateIf, type ValidationError } from 'class-validator';
import { AppError, type FieldError } from './errors.js';

type Constructor<T> = new () => T;

/** Keys that name object internals: never fields, and never passed to class-transformer. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message: message.replace(/^property (\S+) should not exist$/, 'unknown field $1'),
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

// U+0000 and unpaired UTF-16 surrogates cannot be stored in PostgreSQL text or jsonb.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Every string in the input (free-form JSON objects included) that the database could not store. */
function unstorableStrings(value: unknown, path: string, found: FieldError[]): FieldError[] {
  if (typeof value === 'string') {
    if (UNSTORABLE.test(value)) found.push({ field: path, message: `${path} contains a NUL character or an unpaired surrogate` });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => unstorableStrings(item, `${path}.${index}`, found));
  } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, inner] of Object.entries(value)) {
      const field = path ? `${path}.${key}` : key;
      if (UNSTORABLE.test(key)) found.push({ field, message: `the key ${JSON.stringify(key)} contains a NUL character or an unpaired surrogate` });
      else unstorableStrings(inner, field, found);
    }
  }
  return found;
}

/** Validates an instance of an input class; throws BAD_USER_INPUT naming every bad field. */
export async function validateInstance(instance: object): Promise<void> {
  const unstorable = unstorableStrings(instance, '', []);
  if (unstorable.length > 0) throw AppError.badInput(unstorable);
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: false,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) throw AppError.badInput(flatten(errors));
}

/**
 * Turns a REST body or query object into an input class instance and validates it with
 * the same rules GraphQL uses (TypeGraphQL calls validateInstance through validateFn).
 */
export async function parseInput<T extends object>(type: Constructor<T>, plain: unknown, where = 'body'): Promise<T> {
  if (plain === undefined || plain === null) plain = {};
  if (typeof plain !== 'object' || Array.isArray(plain)) {
    throw AppError.badInput([{ field: where, message: `${where} must be a JSON object` }]);
  }
  const reserved = Object.keys(plain as object).filter((key) => RESERVED_KEYS.has(key));
  if (reserved.length > 0) throw AppError.badInput(reserved.map((key) => ({ field: key, message: `unknown field ${key}` })));
  const instance = plainToInstance(type, plain, { exposeDefaultValues: true });
  await validateInstance(instance);
  return instance;
}

/** A field that may be left out but, when sent, may not be null. */
export function OptionalNonNull(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}
