import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validate, ValidateIf, type ValidationError } from 'class-validator';
import { AppError, type FieldError } from './errors.js';

type Constructor<T> = new () => T;

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

/** Validates an instance of an input class; throws BAD_USER_INPUT naming every bad field. */
export async function validateInstance(instance: object): Promise<void> {
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
  const instance = plainToInstance(type, plain, { exposeDefaultValues: true });
  await validateInstance(instance);
  return instance;
}

/** A field that may be left out but, when sent, may not be null. */
export function OptionalNonNull(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}
