import { findSchemaProblem, type TenantSchemaLimits } from './tenant-json-schema.js';
import { linearPatternProblem, linearRegExp, MAX_PROGRAM_SIZE } from './linear-regexp.js';

const LIMITS: TenantSchemaLimits = {
  maxDepth: 3,
  maxItems: 10,
  maxStringLength: 100,
  maxProperties: 4,
  maxSmallestValue: 500,
  maxPatternLength: 20,
  formats: ['date', 'email'],
};
const check = (schema: unknown, limits: Partial<TenantSchemaLimits> = {}) => findSchemaProblem(schema, { ...LIMITS, ...limits });
const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('findSchemaProblem: references and dialect', () => {
  it.each(['$ref', '$dynamicRef', '$recursiveRef', '$anchor', '$dynamicAnchor', '$recursiveAnchor', '$async', '$schema', '$vocabulary'])(
    'refuses %s anywhere, naming it and its path',
    (keyword) => {
      expect(check({ [keyword]: 'x' })).toEqual({ path: '', message: expect.stringMatching(new RegExp(`^uses "\\${keyword}", which is not supported`)) });
      expect(check(object({ a: { [keyword]: true } }))).toEqual({ path: '/properties/a', message: expect.stringContaining(`"${keyword}"`) });
    },
  );

  it('says why: a reference is to be written out, $async is synchronous, $schema is draft-07', () => {
    expect(check({ $ref: '#' })?.message).toBe('uses "$ref", which is not supported: write the fields out');
    expect(check({ $async: true })?.message).toBe('uses "$async", which is not supported: a schema is checked synchronously');
    expect(check({ $schema: 5 })?.message).toBe('uses "$schema", which is not supported: remove it (the dialect is draft-07)');
  });

  it('allows $id at the top level only', () => {
    expect(check({ $id: 'https://example.com/plan', ...object({ a: {} }) })).toBeNull();
    expect(check(object({ a: { $id: 'inner' } }))).toEqual({ path: '/properties/a', message: 'uses "$id", which is not supported: write the fields out' });
  });

  it('walks every subschema keyword, in maps, single schemas and lists', () => {
    const ref = { $ref: '#' };
    const cases: [unknown, string][] = [
      [{ properties: { a: ref } }, '/properties/a'],
      [{ patternProperties: { '^a$': ref } }, '/patternProperties/^a$'],
      [{ definitions: { a: ref } }, '/definitions/a'],
      [{ $defs: { a: ref } }, '/$defs/a'],
      [{ dependentSchemas: { a: ref } }, '/dependentSchemas/a'],
      [{ dependencies: { a: ref } }, '/dependencies/a'],
      [{ items: ref }, '/items'],
      [{ items: [{}, ref] }, '/items/1'],
      [{ prefixItems: [ref] }, '/prefixItems/0'],
      [{ additionalItems: ref }, '/additionalItems'],
      [{ unevaluatedItems: ref }, '/unevaluatedItems'],
      [{ contains: ref }, '/contains'],
      [{ additionalProperties: ref }, '/additionalProperties'],
      [{ unevaluatedProperties: ref }, '/unevaluatedProperties'],
      [{ propertyNames: ref }, '/propertyNames'],
      [{ contentSchema: ref }, '/contentSchema'],
      [{ not: ref }, '/not'],
      [{ if: ref }, '/if'],
      [{ then: ref }, '/then'],
      [{ else: ref }, '/else'],
      [{ allOf: [{}, ref] }, '/allOf/1'],
      [{ anyOf: [ref] }, '/anyOf/0'],
      [{ oneOf: [{}, {}, ref] }, '/oneOf/2'],
    ];
    for (const [schema, path] of cases) expect(check(schema)).toEqual({ path, message: expect.stringContaining('"$ref"') });
  });

  it('skips what is not a schema: draft-07 dependencies as lists of names, boolean schemas, a keyword of the wrong shape', () => {
    expect(check({ dependencies: { a: ['b', '$ref'] } })).toBeNull();
    expect(check({ items: true, additionalProperties: false, not: { not: true } })).toBeNull();
    expect(check({ properties: [{ $ref: '#' }], allOf: { $ref: '#' }, items: 'x' })).toBeNull();
    expect(check(true)).toBeNull();
    expect(check(null)).toBeNull();
  });

  it('escapes ~ and / in the path as JSON Pointer does', () => {
    expect(check({ properties: { 'a/b~c': { $ref: '#' } } })?.path).toBe('/properties/a~1b~0c');
  });
});

describe('findSchemaProblem: depth', () => {
  // Each keyword at the third level: one that describes values a level down is refused, one of the same value is not.
  const atThird = (inner: Record<string, unknown>) => object({ a: object({ b: inner }) });
  it.each([
    ['properties', { properties: { x: {} } }],
    ['patternProperties', { patternProperties: { x: {} } }],
    ['items', { items: {} }],
    ['items as a list', { items: [{}] }],
    ['prefixItems', { prefixItems: [{}] }],
    ['additionalItems', { additionalItems: {} }],
    ['unevaluatedItems', { unevaluatedItems: {} }],
    ['contains', { contains: {} }],
    ['additionalProperties', { additionalProperties: {} }],
    ['unevaluatedProperties', { unevaluatedProperties: {} }],
    ['propertyNames', { propertyNames: {} }],
    ['contentSchema', { contentSchema: {} }],
  ])('%s goes a level down', (_keyword, inner) => {
    expect(check(atThird(inner))?.message).toBe('is nested 4 levels deep; at most 3');
  });
  it.each([
    ['definitions', { definitions: { x: {} } }],
    ['$defs', { $defs: { x: {} } }],
    ['dependentSchemas', { dependentSchemas: { x: {} } }],
    ['dependencies', { dependencies: { x: {} } }],
    ['not', { not: {} }],
    ['if', { if: {} }],
    ['then', { then: {} }],
    ['else', { else: {} }],
    ['allOf', { allOf: [{}] }],
    ['anyOf', { anyOf: [{}] }],
    ['oneOf', { oneOf: [{}] }],
  ])('%s stays at its level', (_keyword, inner) => {
    expect(check(atThird(inner))).toBeNull();
  });

  it('counts a level for properties, items and the like, none for choices, definitions and dependencies', () => {
    expect(check(object({ a: object({ b: { type: 'string' } }) }))).toBeNull(); // 3 levels
    expect(check(object({ a: object({ b: object({ c: {} }) }) }))).toEqual({
      path: '/properties/a/properties/b/properties/c',
      message: 'is nested 4 levels deep; at most 3',
    });
    expect(check({ items: { items: { items: {} } } })).toEqual({ path: '/items/items/items', message: 'is nested 4 levels deep; at most 3' });
    expect(check({ additionalProperties: { contains: { propertyNames: {} } } })?.message).toBe('is nested 4 levels deep; at most 3');
    expect(check({ unevaluatedItems: { unevaluatedProperties: { contentSchema: {} } } })?.message).toBe('is nested 4 levels deep; at most 3');
    expect(check({ additionalItems: { prefixItems: [{ patternProperties: { x: {} } }] } })?.message).toBe('is nested 4 levels deep; at most 3');
    expect(
      check({
        anyOf: [
          {
            allOf: [
              {
                oneOf: [
                  { not: { if: { then: { else: { definitions: { a: { $defs: { b: { dependencies: { c: { dependentSchemas: { d: {} } } } } } } } } } } } },
                ],
              },
            ],
          },
        ],
      }),
    ).toBeNull();
    expect(check({ dependencies: { a: object({ b: object({ c: {} }) }) } })).toBeNull();
    expect(check({ dependencies: { a: object({ b: object({ c: object({ d: {} }) }) }) } })?.message).toBe('is nested 4 levels deep; at most 3');
  });
});

describe('findSchemaProblem: sizes', () => {
  it.each([
    ['minItems', 'maxItems', 10],
    ['maxItems', 'maxItems', 10],
    ['minContains', 'maxItems', 10],
    ['maxContains', 'maxItems', 10],
    ['minLength', 'maxStringLength', 100],
    ['maxLength', 'maxStringLength', 100],
    ['minProperties', 'maxProperties', 4],
    ['maxProperties', 'maxProperties', 4],
  ])('bounds %s by %s', (keyword, _limit, bound) => {
    expect(check({ [keyword]: bound })).toBeNull();
    expect(check({ items: { [keyword]: bound + 1 } })).toEqual({ path: `/items/${keyword}`, message: `is ${bound + 1}; at most ${bound}` });
    expect(check({ [keyword]: 'many' })).toBeNull(); // the meta-schema's to refuse
  });

  it('bounds the properties an object lists', () => {
    expect(check({ properties: { a: {}, b: {}, c: {}, d: {} } })).toBeNull();
    expect(check({ items: { properties: { a: {}, b: {}, c: {}, d: {}, e: {} } } })).toEqual({
      path: '/items/properties',
      message: 'lists 5 properties; at most 4',
    });
  });

  it('bounds the smallest valid value: nested minItems multiply, an object counts what it lists, a string its minLength', () => {
    const message =
      'needs more than 500 values and characters in its smallest valid value (nested minItems, minLength and listed properties multiply); at most 500';
    // 1 + 10 × (1 + 10 × (1 + 3)) = 411
    expect(check({ minItems: 10, items: { minItems: 10, items: { minLength: 3 } } })).toBeNull();
    // 1 + 10 × (1 + 10 × (1 + 4)) = 511
    expect(check({ minItems: 10, items: { minItems: 10, items: { minLength: 4 } } })).toEqual({ path: '', message });
    // listed properties add up: 1 + 4 × (1 + 100) = 405, then 509
    expect(check({ properties: { a: { minLength: 100 }, b: { minLength: 100 }, c: { minLength: 100 }, d: { minLength: 100 } } })).toBeNull();
    expect(
      check({
        properties: { a: { minLength: 100 }, b: { minLength: 100 }, c: { minLength: 100 }, d: { minLength: 100, properties: { e: { minLength: 100 } } } },
      }),
    ).toEqual({ path: '', message });
    // the items of a tuple, and the largest of a choice
    expect(check({ minItems: 10, items: [{ minLength: 60 }] })).toEqual({ path: '', message });
    expect(check({ minItems: 10, prefixItems: [{}, { minLength: 60 }] })).toEqual({ path: '', message });
    expect(check({ minItems: 10, items: [['x']] })).toBeNull();
    expect(check({ anyOf: [{}, { minItems: 10, items: { minItems: 10, items: { minLength: 4 } } }] })).toEqual({ path: '', message });
    expect(check({ oneOf: [{ minItems: 10, items: { minItems: 10, items: { minLength: 4 } } }] })).toEqual({ path: '', message });
    expect(check({ allOf: [{ minItems: 10, items: { minItems: 10, items: { minLength: 4 } } }] })).toEqual({ path: '', message });
    expect(check({ minItems: 0, minLength: 0, allOf: [] })).toBeNull();
    expect(check({ minItems: -5, minLength: -5 })).toBeNull();
    // what is not a positive number counts nothing (the meta-schema refuses it after)
    const big = {
      properties: { a: { minLength: 100 }, b: { minLength: 100 }, c: { minLength: 100 }, d: { minLength: 100, properties: { e: { minLength: 100 } } } },
    };
    expect(check({ ...big, minLength: -1000 })?.path).toBe('');
    expect(check({ ...big, minItems: -10, items: { minLength: 50 } })?.path).toBe('');
    expect(check({ minLength: '9999' })).toBeNull();
    expect(check({ minItems: '50', items: { minLength: 50 } })).toBeNull();
  });

  it('saturates, so nesting deep and wide cannot overflow past the bound into a number that passes', () => {
    const deep = (levels: number): Record<string, unknown> => (levels === 0 ? { minLength: 100 } : { minItems: 10, items: deep(levels - 1) });
    expect(check(deep(40), { maxDepth: 50, maxSmallestValue: Number.MAX_SAFE_INTEGER - 1 })?.message).toMatch(/^needs more than/);
    expect(check(deep(2), { maxSmallestValue: 10_111 })).toBeNull();
    expect(check(deep(2), { maxSmallestValue: 10_110 })?.message).toMatch(/^needs more than 10110/);
  });
});

describe('findSchemaProblem: patterns and formats', () => {
  it('refuses a pattern RE2 cannot run, or longer than the bound, in pattern and patternProperties', () => {
    expect(check({ pattern: '^(a+)+$' })).toBeNull();
    expect(check({ pattern: '^(?=a)a$' })).toEqual({
      path: '/pattern',
      message: expect.stringMatching(/^is a pattern the linear-time engine \(RE2\) cannot run: invalid or unsupported Perl syntax: `\(\?=`/),
    });
    expect(check({ items: { patternProperties: { '(a)\\1': {} } } })).toEqual({
      path: '/items/patternProperties/(a)\\1',
      message: expect.stringMatching(/cannot run: invalid escape sequence/),
    });
    expect(check({ pattern: 'a'.repeat(20) })).toBeNull();
    expect(check({ pattern: 'a'.repeat(21) })).toEqual({ path: '/pattern', message: 'is a pattern of 21 characters; at most 20' });
    expect(check({ patternProperties: { ['b'.repeat(21)]: {} } })?.message).toBe('is a pattern of 21 characters; at most 20');
    expect(check({ pattern: 5 })).toBeNull();
  });

  it('refuses a format not on the list, naming the list', () => {
    expect(check({ format: 'email' })).toBeNull();
    expect(check({ items: { format: 'url' } })).toEqual({ path: '/items/format', message: 'is "url", which is not supported; the formats are date, email' });
    expect(check({ format: 3 })).toBeNull();
  });

  it('answers the first problem in the order of the walk: its own keywords, then its subschemas', () => {
    expect(check({ $ref: '#', minItems: 99 })?.message).toContain('$ref');
    expect(check({ minItems: 99, pattern: '(?=x)' })?.path).toBe('/minItems');
    expect(check({ properties: { a: { $ref: '#' } }, items: { $async: true } })?.path).toBe('/properties/a');
  });
});

describe('the linear-time engine', () => {
  it('matches as the pattern says, unanchored like RegExp.test, in JavaScript syntax', () => {
    expect(linearRegExp('^(a+)+$').test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(linearRegExp('^(a+)+$').test('aaaa')).toBe(true);
    expect(linearRegExp('fine').test('Monday is fine.')).toBe(true);
    expect(linearRegExp('\\u0041(?<x>b)').test('Ab')).toBe(true);
    expect(linearRegExp('^abc$', 'i').test('ABC')).toBe(true);
    expect(linearRegExp('^abc$').test('ABC')).toBe(false);
    expect(String(linearRegExp('a+', 'i'))).toBe('/a+/i');
    expect(String(linearRegExp('a+'))).toBe('/a+/');
    expect(String(linearRegExp('a+'))).not.toBe(String(linearRegExp('b+')));
  });

  it('answers why a pattern cannot run, and bounds its compiled size', () => {
    expect(linearPatternProblem('^[a-z]+$')).toBeNull();
    expect(linearPatternProblem('(a')).toMatch(/^missing closing \)/);
    expect(linearPatternProblem('a{1001}')).toMatch(/^invalid repeat count/);
    expect(linearPatternProblem('[a-z]{998}')).toBeNull();
    expect(linearPatternProblem('[a-z]{999}')).toBe(`it compiles to 1001 instructions; at most ${MAX_PROGRAM_SIZE} (use smaller repeat counts)`);
    expect(linearPatternProblem('(?:[a-z]{1,100}){1,10}')).toBe(`it compiles to 2001 instructions; at most ${MAX_PROGRAM_SIZE} (use smaller repeat counts)`);
  });
});
