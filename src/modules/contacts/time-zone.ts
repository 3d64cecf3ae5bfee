import { registerDecorator, type ValidationOptions } from 'class-validator';

const KNOWN = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** An IANA zone name; canonical names from Intl, and aliases (US/Eastern) that Intl still accepts. */
export function isTimeZone(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (KNOWN.has(value)) return true;
  if (!IANA_NAME.test(value)) return false; // refuses offsets such as +01:00, which Intl also takes
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export function IsTimeZone(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTimeZone',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: `${String(propertyName)} must be an IANA time zone such as Europe/Paris`, ...options },
      validator: { validate: isTimeZone },
    });
}
