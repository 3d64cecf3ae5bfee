import { CreateAgentDocument, CreateContactDocument } from '../generated/graphql.js';
import { MAX_INPUT_DEPTH } from '../../src/common/validation.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// Input that used to answer 500 (issue 9, finding 10): each class answers 400 BAD_USER_INPUT, on both doors.

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const agentJson = (extra: string) => `{"name":"A","instructions":"I","modelConfig":{"model":"builtin/echo"${extra.startsWith(',"providerOptions"') ? extra : ''}}${extra.startsWith(',"providerOptions"') ? '' : extra}}`;
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const fields = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();

async function graphqlRaw(body: string, headers: Record<string, string> = { 'x-api-key': acme.apiKey }, target: TestApp = app) {
  const res = await fetch(`${target.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as { errors?: { message: string; extensions: { code: string; errors?: { field: string }[] } }[] } };
}

const CREATE_AGENT = 'mutation Create($input: CreateAgentInput!) { createAgent(input: $input) { id } }';

describe('object internals as keys inside free-form JSON', () => {
  it.each([
    ['metadata', ',"metadata":{"constructor":{"x":1}}', 'metadata.constructor'],
    ['deeper in metadata', ',"metadata":{"a":{"b":{"constructor":1}}}', 'metadata.a.b.constructor'],
    ['metadata.__proto__', ',"metadata":{"__proto__":{"x":1}}', 'metadata.__proto__'],
    ['modelConfig.providerOptions', ',"providerOptions":{"prototype":{"x":1}}', 'modelConfig.providerOptions.prototype'],
  ])('%s → 400 naming the key on both doors', async (_label, extra, field) => {
    const raw = agentJson(extra);
    const rest = await acme.rest.request('POST', '/api/agents', undefined, raw);
    expect([rest.status, rest.body.code, fields(rest.body.errors)]).toEqual([400, 'BAD_USER_INPUT', [field]]);
    expect(rest.body.errors[0].message).toMatch(/is not allowed/);
    const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
    expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(gql.body.errors?.[0]?.extensions.errors)).toEqual([field]);
  });

  it('a contact attribute named constructor → 400 on both doors, and nothing is written', async () => {
    const rest = await acme.rest.request('POST', '/api/contacts', undefined, '{"phone":"+15550001111","attributes":{"constructor":{"a":1}}}');
    expect([rest.status, fields(rest.body.errors)]).toEqual([400, ['attributes.constructor']]);
    const gql = await acme.graphql.run(CreateContactDocument, { input: { phone: '+15550001111', attributes: JSON.parse('{"constructor":{"a":1}}') } });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fields(gql.errors?.[0]?.extensions.errors)).toEqual(['attributes.constructor']);
    expect((await acme.rest.get('/api/contacts')).body.meta.total).toBe(0);
  });
});

describe('deep nesting', () => {
  it.each([
    ['arrays 10,000 deep', nestedArrays(10_000)],
    ['objects 10,000 deep', nestedObjects(10_000)],
    [`objects ${MAX_INPUT_DEPTH} deep`, nestedObjects(MAX_INPUT_DEPTH)],
  ])('JSON %s in metadata → 400 on both doors', async (_label, deep) => {
    const raw = agentJson(`,"metadata":{"a":${deep}}`);
    const rest = await acme.rest.request('POST', '/api/agents', undefined, raw);
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(rest.body.detail).toMatch(new RegExp(`nested more than ${MAX_INPUT_DEPTH} levels deep`));
    const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
    expect(gql.status).toBe(200);
    expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.body.errors?.[0]?.message).toBe(rest.body.detail);
  });

  it('metadata nested just within the limit is kept', async () => {
    const raw = agentJson(`,"metadata":${nestedObjects(MAX_INPUT_DEPTH - 2)}`);
    expect((await acme.rest.request('POST', '/api/agents', undefined, raw)).status).toBe(201);
    const gql = await graphqlRaw(`{"query":${JSON.stringify(CREATE_AGENT)},"variables":{"input":${raw}}}`);
    expect(gql.body.errors).toBeUndefined();
  });

  it('a GraphQL literal nested 3,000 deep → 400 BAD_USER_INPUT, not a stack overflow', async () => {
    for (const query of [
      `{ agents(search: ${nestedArrays(3000)}) { meta { total } } }`,
      `mutation { createAgent(input: {name: "a", instructions: "i", modelConfig: {model: "builtin/echo"}, metadata: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}}) { id } }`,
    ]) {
      const gql = await graphqlRaw(JSON.stringify({ query }));
      expect(gql.status).toBe(400);
      expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(gql.text).not.toMatch(/RangeError|call stack/);
    }
  });

  it('a literal nested past the input depth but within the token limit → 400 as on REST', async () => {
    const query = `mutation { createAgent(input: {name: "a", instructions: "i", modelConfig: {model: "builtin/echo"}, metadata: {a: ${'{a: '.repeat(40)}1${'}'.repeat(40)}}}) { id } }`;
    const gql = await graphqlRaw(JSON.stringify({ query }));
    expect(gql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(gql.body.errors?.[0]?.message).toMatch(/nested more than/);
  });
});

describe('GraphQL syntax errors', () => {
  it.each([['development', 'development'], ['production', 'production']])('in %s → 400 BAD_USER_INPUT with the parser message', async (_label, nodeEnv) => {
    const target = nodeEnv === 'production' ? await startTestApp({ nodeEnv }) : app;
    try {
      const org = target === app ? acme : await target.organization('Prod');
      for (const query of ['{ me { ', '{ me } }', 'query (', '"""']) {
        const gql = await graphqlRaw(JSON.stringify({ query }), { 'x-api-key': org.apiKey }, target);
        expect([gql.status, gql.body.errors?.[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
        expect(gql.body.errors?.[0]?.message).toMatch(/^Syntax Error/);
      }
      // More tokens than GRAPHQL_MAX_TOKENS is refused by the parser, with the same code.
      const many = await graphqlRaw(JSON.stringify({ query: `{ ${'__typename '.repeat(6000)} }` }), { 'x-api-key': org.apiKey }, target);
      expect([many.status, many.body.errors?.[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(many.body.errors?.[0]?.message).toMatch(/tokens/);
    } finally {
      if (target !== app) await target.close();
    }
  });
});

describe('a value longer than its column', () => {
  it('a 3,000-character path id with an Idempotency-Key → 400, not 500', async () => {
    const res = await acme.rest.with({ 'Idempotency-Key': 'long-path' }).request('POST', `/api/agents/${'a'.repeat(3000)}/conversations`);
    expect([res.status, res.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(res.body.detail).toMatch(/longer than can be stored/);
  });
});
