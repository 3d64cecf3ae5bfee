import { toAppError } from '../../src/common/error-mapping.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// A lost database (what the fault script does to PostgreSQL) seen through each door: REST answers
// 503 problem+json, GraphQL answers 503 in GraphQL's own shape; both with Retry-After.
const lost = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

let app: TestApp;
let acme: TestOrganization;
beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

function graphqlPost(body: string, headers: Record<string, string> = { 'x-api-key': acme.apiKey }) {
  return fetch(`${app.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

describe('the database is lost while authenticating', () => {
  let restore: () => void;
  beforeEach(() => {
    const auth = app.gateway.services.auth;
    const original = auth.authenticate;
    auth.authenticate = async () => {
      throw lost();
    };
    restore = () => {
      auth.authenticate = original;
    };
  });
  afterEach(() => restore());

  it('REST answers 503 problem+json with Retry-After', async () => {
    const res = await acme.rest.get('/api/agents');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.code).toBe('UNAVAILABLE');
  });

  it('GraphQL answers 503 with an UNAVAILABLE error in GraphQL shape and Retry-After', async () => {
    const res = await graphqlPost(JSON.stringify({ query: '{ me { id } }' }));
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('retry-after')).toBe('5');
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string; requestId: string } }[] };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.extensions.code).toBe('UNAVAILABLE');
    expect(body.errors[0]!.extensions.requestId).toBe(res.headers.get('x-request-id'));
  });
});

describe('the database is lost inside a resolver', () => {
  it('GraphQL answers 503 with Retry-After and the UNAVAILABLE error', async () => {
    const auth = app.gateway.services.auth;
    const original = auth.me;
    auth.me = async () => {
      throw lost();
    };
    try {
      const res = await graphqlPost(JSON.stringify({ query: '{ me { id } }' }));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      const body = (await res.json()) as { data: unknown; errors: { extensions: { code: string } }[] };
      expect(body.data).toBeNull();
      expect(body.errors.map((error) => error.extensions.code)).toEqual(['UNAVAILABLE']);
    } finally {
      auth.me = original;
    }
  });

  it('other errors keep HTTP 200 and no Retry-After', async () => {
    const res = await graphqlPost(JSON.stringify({ query: '{ agent(id: "00000000-0000-4000-8000-000000000000") { id } }' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('retry-after')).toBeNull();
    const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('NOT_FOUND');
  });
});

it('a malformed body on /graphql answers 400 in GraphQL shape', async () => {
  const res = await graphqlPost('{"query": ');
  expect(res.status).toBe(400);
  const body = (await res.json()) as { errors: { extensions: { code: string } }[] };
  expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
});

describe('lost connections map to UNAVAILABLE, never a 500', () => {
  it.each([
    ['a statement on a connection lost earlier (pg)', new Error('Client has encountered a connection error and is not queryable')],
    ['a statement on a closed connection (pg)', new Error('Client was closed and is not queryable')],
    [
      'the backend ended because another one crashed (57P02)',
      Object.assign(new Error('terminating connection because of crash of another server process'), { code: '57P02' }),
    ],
  ])('%s', (_label, error) => {
    expect(toAppError(error).code).toBe('UNAVAILABLE');
  });
});
