import fc from 'fast-check';
import { getNamedType, isEnumType, isInputObjectType, isLeafType, isListType, isNonNullType, type GraphQLInputType, type GraphQLField } from 'graphql';
import { gatewaySchema } from '../../src/doors.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { deepValue, hostileNumber, hostileString, hostileValue, prototypeObject, runs } from './arbitraries.js';
import { rowCounts, seed, type Seeded } from './fixtures.js';

// Variables built from each mutation's argument types: right shapes with random values, wrong types,
// missing and extra fields. No INTERNAL_SERVER_ERROR or UNAVAILABLE, every error has a code, no row on an error.

let app: TestApp;
let fuzzer: TestOrganization;
let ids: string[] = [];

const schema = await gatewaySchema();
const mutations = Object.values(schema.getMutationType()!.getFields());

beforeAll(async () => {
  app = await startTestApp();
  fuzzer = await app.organization('Fuzzer');
  const victim = await app.organization('Victim');
  const own: Seeded = await seed(fuzzer);
  const other: Seeded = await seed(victim);
  ids = [...Object.values(own), ...Object.values(other)];
});
afterAll(() => app?.close());

function scalarValue(name: string): fc.Arbitrary<unknown> {
  switch (name) {
    case 'ID':
      return fc.oneof(fc.uuid(), fc.constantFrom(...ids), hostileString);
    case 'String':
      return hostileString;
    case 'Int':
      return fc.oneof(fc.integer({ min: -5, max: 1_000_001 }), hostileNumber);
    case 'Float':
      return hostileNumber;
    case 'Boolean':
      return fc.boolean();
    case 'DateTimeISO':
    case 'DateTime':
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
        hostileString,
      );
    default:
      // Free-form JSON: hostile keys (object internals) and values nested far past the input depth limit.
      return fc.oneof(
        fc.dictionary(fc.string({ maxLength: 8 }), hostileValue, { maxKeys: 4 }),
        hostileValue,
        prototypeObject,
        deepValue.map((deep) => ({ deep })),
      );
  }
}

/** Right-ish values for a type, and now and then a wrong one (any JSON) or null where it may not be. */
function valueOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const wrong = hostileValue;
  if (isNonNullType(type)) return fc.oneof({ weight: 8, arbitrary: valueOf(type.ofType, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  const right = ((): fc.Arbitrary<unknown> => {
    if (isListType(type)) return fc.array(valueOf(type.ofType, depth + 1), { maxLength: depth > 2 ? 1 : 4 });
    if (isEnumType(type)) return fc.oneof(fc.constantFrom(...type.getValues().map((value) => value.name)), fc.string({ maxLength: 10 }));
    if (isInputObjectType(type)) {
      if (depth > 4) return fc.constant({});
      const fields = Object.values(type.getFields());
      const record = Object.fromEntries(fields.map((field) => [field.name, valueOf(field.type, depth + 1)]));
      const known = fc.record(record, { requiredKeys: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name) });
      return fc.oneof(
        { weight: 4, arbitrary: known },
        { weight: 1, arbitrary: fc.record(record, { requiredKeys: [] }) },
        {
          weight: 1,
          arbitrary: fc.tuple(known, fc.string({ minLength: 1, maxLength: 8 }), hostileValue).map(([value, key, extra]) => ({ ...value, [key]: extra })),
        },
      );
    }
    return scalarValue(getNamedType(type).name);
  })();
  return fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: wrong }, { weight: 1, arbitrary: fc.constant(null) });
}

function documentOf(field: GraphQLField<unknown, unknown>): string {
  const declared = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isLeafType(getNamedType(field.type)) ? '' : ' { __typename }';
  return `mutation Fuzz${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`;
}

const FAILURES = new Set(['INTERNAL_SERVER_ERROR', 'UNAVAILABLE']);

it('covers mutations', () => expect(mutations.length).toBeGreaterThan(0));

it.each(mutations.map((field) => [field.name, field] as const))('%s: no internal error, every error coded, no row on an error', async (_name, field) => {
  const query = documentOf(field);
  const variables = fc.record(Object.fromEntries(field.args.map((arg) => [arg.name, valueOf(arg.type)])), { requiredKeys: [] });
  let before = await rowCounts(app);
  await fc.assert(
    fc.asyncProperty(variables, async (values) => {
      const res = await fetch(`${app.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': fuzzer.apiKey },
        body: JSON.stringify({ query, variables: values }),
      });
      const text = await res.text();
      const seen = `${res.status} ${text.slice(0, 500)}`;
      if (res.status >= 500) throw new Error(`HTTP ${seen}`);
      const body = JSON.parse(text) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
      if (!body.errors?.length) {
        before = await rowCounts(app);
        return;
      }
      for (const error of body.errors) {
        const code = error.extensions?.code;
        if (!code || FAILURES.has(code)) throw new Error(`error code ${code}: ${seen}`);
      }
      expect(await rowCounts(app)).toEqual(before);
    }),
    runs(12),
  );
});
