import { getIntrospectionQuery } from 'graphql';
import { gql } from 'graphql-request';
import { createLogger } from '../../src/common/logger.js';
import { CreateAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// Input no reasonable client sends, which must still get a clear 400 (never a 500) on both doors.

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const fields = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();
const agent = (overrides: Record<string, unknown>) => ({ name: 'A', instructions: 'I', modelConfig: { model: 'builtin/echo' }, ...overrides });

async function rawGraphql(query: string) {
  const res = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { errors?: { extensions: { code: string; errors?: { field: string }[] } }[] };
}

it.each([
  ['a NUL in a text field', agent({ name: 'a\u0000b' }), ['name']],
  ['a NUL inside free-form metadata', agent({ metadata: { note: { deep: 'x\u0000' } } }), ['metadata.note.deep']],
  ['an unpaired surrogate', agent({ modelConfig: { model: 'builtin/\ud800' } }), ['modelConfig.model']],
  ['a NUL in a key of free-form metadata', agent({ metadata: { 'a\u0000': 1 } }), ['metadata.a\u0000']],
])('%s → 400 naming the field on both doors', async (_label, input, expected) => {
  const rest = await acme.rest.post('/api/agents', input);
  expect(rest.status).toBe(400);
  expect(fields(rest.body.errors)).toEqual(expected);
  const gqlResult = await acme.graphql.run(CreateAgentDocument, { input: input as never });
  expect(gqlResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(fields(gqlResult.errors?.[0]?.extensions.errors)).toEqual(expected);
});

it('a page far past any list → 400 naming page on both doors', async () => {
  for (const page of ['1e300', '2147483648', '1000001']) {
    const rest = await acme.rest.get(`/api/agents?page=${page}`);
    expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['page']]);
  }
  expect((await acme.rest.get('/api/agents?page=1000000')).status).toBe(200);
  const result = await rawGraphql('{ agents(page: 1000001) { meta { total } } }');
  expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(fields(result.errors?.[0]?.extensions.errors)).toEqual(['page']);
});

it('literals of the wrong type or unknown enum values are BAD_USER_INPUT on GraphQL, as on REST', async () => {
  const rest = await acme.rest.get('/api/agents?status=deleted');
  expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['status']]);
  const enumResult = await rawGraphql('{ agents(status: deleted) { meta { total } } }');
  expect(enumResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(fields(enumResult.errors?.[0]?.extensions.errors)).toEqual(['status']);
  const typeResult = await rawGraphql(gql`mutation { testAgent(id: "x", message: 5) { response } }`);
  expect(typeResult.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(fields(typeResult.errors?.[0]?.extensions.errors)).toEqual(['message']);
  const missing = await rawGraphql('mutation { createAgent(input: { name: "x", modelConfig: { model: "builtin/echo" } }) { id } }');
  expect(missing.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  expect(fields(missing.errors?.[0]?.extensions.errors)).toEqual(['instructions']);
});

it('object internals are no fields: constructor, __proto__ and prototype are refused', async () => {
  for (const key of ['constructor', '__proto__', 'prototype']) {
    const res = await acme.rest.request('POST', '/api/agents', undefined, `{"name":"A","instructions":"I","modelConfig":{"model":"builtin/echo"},"${key}":{"x":1}}`);
    expect([res.status, fields(res.body.errors)]).toEqual([400, [key]]);
  }
});

it('a path that is not valid percent-encoding → 400, not 500', async () => {
  const res = await acme.rest.get('/api/agents/%E0%A4%A');
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('BAD_USER_INPUT');
});

it('a logged database error carries neither its statement nor its values', () => {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  const error = Object.assign(new Error('insert failed'), {
    query: "insert into agents (policy) values ('POLICY-SECRET')",
    params: ['POLICY-SECRET'],
    cause: Object.assign(new Error('driver'), { detail: 'Key (policy)=(POLICY-SECRET) exists', where: 'POLICY-SECRET' }),
  });
  logger.error({ err: error }, 'request failed');
  expect(lines.join('')).toContain('insert failed');
  expect(lines.join('')).not.toContain('POLICY-SECRET');
});

describe('GraphQL limits', () => {
  it('a query deeper than the limit, or with too many aliases, is refused before it runs', async () => {
    const deep = await rawGraphql(
      '{ agents { data { conversations { data { agent { conversations { data { agent { conversations { data { agent { id } } } } } } } } } } } }',
    );
    expect(deep.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(deep)).toMatch(/depth/i);
    const aliases = Array.from({ length: 20 }, (_, i) => `a${i}: me { id }`).join(' ');
    const many = await rawGraphql(`{ ${aliases} }`);
    expect(many.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const fine = await rawGraphql('{ agents(limit: 5) { data { id conversations(limit: 5) { data { id agent { name } } } } } }');
    expect(fine.errors).toBeUndefined();
  });

  it('Sandbox introspection (a deep query) is not counted against the depth limit', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: getIntrospectionQuery() }),
    });
    const body = (await res.json()) as { data?: { __schema: unknown }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.__schema).toBeDefined();
  });
});
