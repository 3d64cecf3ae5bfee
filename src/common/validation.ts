import 'reflect-metadata';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { plainToInstance } from 'class-transformer';
import { IsString, Length, MaxLength, validate, ValidateIf, ValidationError, type ValidatorOptions } from 'class-validator';
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
// eslint-disable-next-line no-control-regex -- U+0000 is the character refused
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** How deep an input may nest, free-form JSON included: deeper input is refused before anything recurses into it. */
export const MAX_INPUT_DEPTH = 32;

/**
 * Every value of an input (free-form JSON objects included) the gateway will not take: a string the
 * database cannot store, a key naming object internals, nesting past MAX_INPUT_DEPTH. Iterative, so
 * input nested 10,000 deep is refused rather than overflowing the stack.
 */
export function hostileJson(root: unknown): FieldError[] {
  const found: FieldError[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) found.push({ field: path, message: `${path} contains a NUL character or an unpaired surrogate` });
      continue;
    }
    if (value === null || typeof value !== 'object' || value instanceof Date) continue;
    if (depth >= MAX_INPUT_DEPTH) {
      found.push({ field: path, message: `${path} is nested more than ${MAX_INPUT_DEPTH} levels deep` });
      continue;
    }
    const entries: [string, unknown][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
    for (const [key, inner] of entries) {
      const field = path ? `${path}.${key}` : key;
      if (UNSTORABLE.test(key)) found.push({ field, message: `the key ${JSON.stringify(key)} contains a NUL character or an unpaired surrogate` });
      else if (RESERVED_KEYS.has(key) && !Array.isArray(value))
        found.push({ field, message: path ? `the key "${key}" is not allowed` : `unknown field ${key}` });
      else stack.push({ value: inner, path: field, depth: depth + 1 });
    }
  }
  return found.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}

/**
 * Instances already found valid, by class, under `flatKey`: the same small arguments come again and
 * again (`limit: 20` on every page, a relation's arguments once per parent row), and class-validator
 * spends more on them than the rest of reading them. Only passes are kept; what fails is checked each time.
 */
const VALID = new WeakMap<object, Set<string>>();
/** How many passes are kept per class; past it the set starts again (cheaper than an LRU, enough for a hot few). */
const VALID_PER_CLASS = 500;
/** A longer key is not kept: large inputs are rare, and hashing them would cost what it saves. */
const MAX_KEY_LENGTH = 512;

/**
 * A key that is the same for two instances of one class exactly when they validate alike: every own
 * key in order, `undefined` included (an unknown key with no value is still refused), and each value a
 * string, finite number, boolean or null, or an array of them, typed (`1` and `"1"` differ). Anything
 * else (a nested input, a date, free-form JSON) gets no key and is always validated.
 */
function flatKey(instance: object): string | null {
  let key = '';
  for (const name of Object.keys(instance)) {
    const value = (instance as Record<string, unknown>)[name];
    const part = Array.isArray(value) ? (value.every(isFlat) ? `[${value.map(flatValue).join(',')}]` : null) : isFlat(value) ? flatValue(value) : null;
    if (part === null) return null;
    key += `${JSON.stringify(name)}:${part};`;
    if (key.length > MAX_KEY_LENGTH) return null;
  }
  return key;
}

const isFlat = (value: unknown) =>
  value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
const flatValue = (value: unknown) => (value === undefined ? 'u' : typeof value === 'string' ? JSON.stringify(value) : `${typeof value}:${String(value)}`);

const OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: false,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
};

/**
 * A list of more objects than this (a 10,000-row import) is read and checked a slice at a time, with a
 * turn of the event loop between two: class-transformer and class-validator took 0.3 to 0.8 s of it
 * at once for 10,000 contacts, and every tenant's requests waited that long.
 */
const SLICE = 250;

const isObjectItem = (item: unknown) => item !== null && typeof item === 'object' && !(item instanceof Date);

/** The own properties of `value` holding a list of more than SLICE items, objects among them. */
function largeLists(value: object): string[] {
  return Object.entries(value)
    .filter(([, list]) => Array.isArray(list) && list.length > SLICE && list.some(isObjectItem))
    .map(([name]) => name);
}

/**
 * class-validator's errors for `instance` with its large lists' object items checked a slice at a time:
 * the instance itself is checked with each such list replaced by a sparse one of the same length (its
 * size and type rules apply, and class-validator visits no hole), then, unless the list itself was
 * refused, each item as ValidateNested would, under the list's error as `<index>` children.
 */
async function validateSliced(instance: object, lists: string[]): Promise<ValidationError[]> {
  const head = Object.assign(Object.create(Object.getPrototypeOf(instance) as object) as Record<string, unknown>, instance);
  for (const name of lists) {
    const sparse = new Array((head[name] as unknown[]).length);
    (head[name] as unknown[]).forEach((item, index) => {
      if (!isObjectItem(item)) sparse[index] = item; // refused by the list's own ValidateNested, as before
    });
    head[name] = sparse;
  }
  const errors = await validate(head, OPTIONS);
  for (const name of lists) {
    let own = errors.find((error) => error.property === name);
    if (own && Object.keys(own.constraints ?? {}).length > 0) continue;
    const items = (instance as Record<string, unknown[]>)[name]!;
    const children: ValidationError[] = [];
    for (let start = 0; start < items.length; start += SLICE) {
      if (start > 0) await nextTurn();
      for (let index = start; index < Math.min(items.length, start + SLICE); index++) {
        if (!isObjectItem(items[index])) continue;
        const failed = await validate(items[index] as object, OPTIONS);
        if (failed.length > 0) children.push(Object.assign(new ValidationError(), { property: String(index), children: failed, constraints: {} }));
      }
    }
    if (children.length === 0) continue;
    if (!own) errors.push((own = Object.assign(new ValidationError(), { property: name, children: [], constraints: {} })));
    own.children = [...(own.children ?? []), ...children].sort((a, b) => Number(a.property) - Number(b.property));
  }
  return errors;
}

/** Validates an instance of an input class; throws BAD_USER_INPUT naming every bad field. */
export async function validateInstance(instance: object): Promise<void> {
  const key = flatKey(instance);
  const passed = VALID.get(instance.constructor);
  if (key !== null && passed?.has(key)) return;
  const hostile = hostileJson(instance);
  if (hostile.length > 0) throw AppError.badInput(hostile);
  const lists = largeLists(instance);
  const errors = lists.length > 0 ? await validateSliced(instance, lists) : await validate(instance, OPTIONS);
  if (errors.length > 0) throw AppError.badInput(flatten(errors));
  if (key === null) return;
  if (!passed) VALID.set(instance.constructor, new Set([key]));
  else {
    if (passed.size >= VALID_PER_CLASS) passed.clear();
    passed.add(key);
  }
}

/**
 * Turns a REST body or query object into an input class instance and validates it with
 * the same rules GraphQL uses (TypeGraphQL calls validateInstance through validateFn).
 */
/**
 * Arguments as a resolver would get them: an instance of `type`, validated the same way; null when
 * they are not valid (the resolver then refuses them itself, as it would without a look-ahead).
 */
export async function validArgs<T extends object>(type: Constructor<T>, args: Record<string, unknown>): Promise<T | null> {
  const instance = plainToInstance(type, args);
  try {
    await validateInstance(instance);
    return instance;
  } catch {
    return null;
  }
}

/**
 * Inputs already read and found valid, by class and by `flatKey` of what was sent: the fields of the
 * instance they made. A REST list's query is the same few strings again and again (`limit=20`), and
 * class-transformer and the checks before it cost about 2 % of the request's CPU to make the same
 * instance. A fresh instance is made from them each time (its arrays copied), so no request sees what
 * another did to its own. Only flat instances are kept (see flatKey); bounded as VALID is.
 */
const PARSED = new WeakMap<object, Map<string, [string, unknown][]>>();

function rememberParsed(type: object, key: string, instance: object): void {
  const fields = Object.entries(instance);
  if (!fields.every(([, value]) => (Array.isArray(value) ? value.every(isFlat) : isFlat(value)))) return;
  let parsed = PARSED.get(type);
  if (!parsed) PARSED.set(type, (parsed = new Map()));
  else if (parsed.size >= VALID_PER_CLASS) parsed.clear();
  // Copies: the instance's arrays are the request's to change.
  parsed.set(
    key,
    fields.map(([name, value]) => [name, Array.isArray(value) ? [...(value as unknown[])] : value]),
  );
}

function rebuilt<T extends object>(type: Constructor<T>, fields: [string, unknown][]): T {
  const instance = new type() as Record<string, unknown>;
  for (const [name, value] of fields) instance[name] = Array.isArray(value) ? [...(value as unknown[])] : value;
  return instance as T;
}

/** plainToInstance, with each large list converted a slice at a time (see SLICE). */
async function toInstance<T extends object>(type: Constructor<T>, plain: Record<string, unknown>): Promise<T> {
  const lists = largeLists(plain);
  if (lists.length === 0) return plainToInstance(type, plain, { exposeDefaultValues: true });
  const instance = plainToInstance(type, { ...plain, ...Object.fromEntries(lists.map((name) => [name, []])) }, { exposeDefaultValues: true }) as Record<
    string,
    unknown
  >;
  for (const name of lists) {
    const items = plain[name] as unknown[];
    const converted: unknown[] = [];
    for (let start = 0; start < items.length; start += SLICE) {
      await nextTurn();
      // The list's items as the class converts them, through the same @Type: a slice in a list of its own.
      const slice = plainToInstance(type, { [name]: items.slice(start, start + SLICE) }, { exposeDefaultValues: true }) as Record<string, unknown[]>;
      converted.push(...slice[name]!);
    }
    instance[name] = converted;
  }
  return instance as T;
}

export async function parseInput<T extends object>(type: Constructor<T>, plain: unknown, where = 'body'): Promise<T> {
  if (plain === undefined || plain === null) plain = {};
  if (typeof plain !== 'object' || Array.isArray(plain)) {
    throw AppError.badInput([{ field: where, message: `${where} must be a JSON object` }]);
  }
  // The same flat input as one that passed before passes again, to the same fields.
  const key = flatKey(plain as object);
  const parsed = key === null ? undefined : PARSED.get(type)?.get(key);
  if (parsed) return rebuilt(type, parsed);
  // Before class-transformer, which recurses and throws on a "constructor" key at any depth.
  const hostile = hostileJson(plain);
  if (hostile.length > 0) throw AppError.badInput(hostile);
  const instance = await toInstance(type, plain as Record<string, unknown>);
  await validateInstance(instance);
  if (key !== null) rememberParsed(type, key, instance);
  return instance;
}

/** A field that may be left out but, when sent, may not be null. */
export function OptionalNonNull(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}

/**
 * Several validation decorators as one, applied in the order they would have been had they been
 * written one above the other (the last first), so a create and an update input can share the
 * rules of a field while each says itself whether the field is required.
 */
export function Rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const decorator of [...decorators].reverse()) decorator(target, property);
  };
}

/**
 * The name and description of audiences, call flows and knowledge bases: one rule each, which their
 * create and update inputs share (each input says whether the field is required or nullable).
 */
export const NamedRules = {
  name: () => Rules(Length(1, 255), IsString()),
  description: () => Rules(MaxLength(2000), IsString()),
};
