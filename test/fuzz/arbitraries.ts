import fc from 'fast-check';

/** Fixed seed: CI sees the same cases every run; change it locally to explore. */
export const SEED = 20261122;
export const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });

/** Strings a careless client or an attacker sends: empty, huge, unicode, numbers in disguise, SQL and path tricks. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    'NaN',
    'Infinity',
    '-0',
    '1e308',
    '-1e308',
    '0x10',
    'null',
    'true',
    '[]',
    '{}',
    "'; drop table agents; --",
    '../../etc/passwd',
    '%00',
    '\u0000',
    '\ud800',
    '😀'.repeat(50),
    'builtin/echo',
    'openai/gpt-4o',
  ),
  fc.nat({ max: 20_000 }).map((length) => 'x'.repeat(length)),
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1, -1, 1e308, -1e308, 2 ** 31, 2 ** 53 + 1, 5e-324, 0.5),
);

/** Keys that name object internals: class-transformer and naive merges trip over them at any depth. */
export const prototypeKey: fc.Arbitrary<string> = fc.constantFrom('__proto__', 'constructor', 'prototype');

/** Free-form JSON with an object-internals key somewhere below the top: `{a: {constructor: {...}}}`. */
export const prototypeObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', 'metadata'), { maxLength: 3 }), prototypeKey, fc.jsonValue({ maxDepth: 1 }))
  .map(([path, key, leaf]) => path.reduceRight<unknown>((inner, name) => ({ [name]: inner }), JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(leaf)}}`)));

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  prototypeObject,
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 }),
  fc.uuid(),
);

/** JSON nested tens to thousands of levels deep (JSON.stringify itself overflows past about 5,000: see deepJsonText). */
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.oneof(fc.integer({ min: 20, max: 400 }), fc.integer({ min: 400, max: 3000 })), fc.boolean())
  .map(([depth, arrays]) => {
    let value: unknown = 'bottom';
    for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
    return value;
  });

/** A body whose field (or the body itself) is JSON nested 5,000 to 12,000 deep, written as text. */
export function deepJsonText(fields: string[]): fc.Arbitrary<string> {
  const field = fields.length > 0 ? fc.option(fc.constantFrom(...fields), { nil: undefined }) : fc.constant(undefined);
  return fc.tuple(field, fc.integer({ min: 5000, max: 12_000 }), fc.boolean()).map(([name, depth, arrays]) => {
    const deep = arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    return name === undefined ? deep : `{${JSON.stringify(name)}:${deep}}`;
  });
}

/** Path ids past any column: 256 to 3,000 characters. */
export const longId: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 256, max: 3000 }), fc.constantFrom('a', '0', '-', '%41'))
  .map(([length, unit]) => unit.repeat(length));

/** Bodies for an input class: its own fields with hostile values, unknown keys, wrong shapes altogether. */
export function hostileBody(fields: string[]): fc.Arbitrary<unknown> {
  const known = fields.length > 0 ? fc.constantFrom(...fields) : fc.string();
  const key = fc.oneof(
    known,
    known,
    fc.string({ maxLength: 12 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'organizationId', 'createdAt'),
  );
  return fc.oneof(
    fc.dictionary(key, fc.oneof(hostileValue, deepValue), { maxKeys: 8 }),
    fc.dictionary(known, hostileValue, { maxKeys: fields.length || 1 }),
    fc.jsonValue({ maxDepth: 4 }),
    fc.array(fc.dictionary(known, hostileValue, { maxKeys: 3 }), { maxLength: 3 }),
    deepValue,
    hostileString,
    hostileNumber,
  );
}

/** Query strings: the query class's keys and others, hostile values, some keys repeated. */
export function hostileQuery(fields: string[]): fc.Arbitrary<string> {
  const key = fields.length > 0 ? fc.oneof(fc.constantFrom(...fields), fc.constantFrom(...fields), fc.string({ maxLength: 10 })) : fc.string({ maxLength: 10 });
  const value = fc.oneof(
    hostileString.filter((text) => text.length < 3000),
    fc.integer().map(String),
    fc.constantFrom('asc', 'desc', 'createdAt', 'name', '0', '101', '1000001'),
  );
  return fc.array(fc.tuple(key, value), { maxLength: 5 }).map((pairs) => {
    const params = new URLSearchParams();
    for (const [name, text] of pairs) params.append(name, text);
    const text = params.toString();
    return text ? `?${text}` : '';
  });
}
