import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

// While the database is lost every request fails alike: each is logged as one warn line naming the
// cause, not an error with a stack per request (which buried everything else during an outage).
const entries: Record<string, unknown>[] = [];
let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp({ logLevel: 'info' }, { write: (line: string) => void entries.push(JSON.parse(line) as Record<string, unknown>) });
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

it('a lost database is logged at warn with its cause, without a stack, on both doors', async () => {
  const auth = app.gateway.services.auth;
  const original = auth.me;
  auth.me = async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  };
  try {
    entries.length = 0;
    expect((await acme.rest.get('/api/users/me')).status).toBe(503);
    const graphql = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: '{ me { id } }' }),
    });
    expect(graphql.status).toBe(503);
  } finally {
    auth.me = original;
  }
  const failures = entries.filter((entry) => entry.msg === 'request failed' || entry.msg === 'GraphQL operation failed');
  expect(failures.map((entry) => entry.msg).sort()).toEqual(['GraphQL operation failed', 'request failed']);
  for (const entry of failures) {
    expect(entry).toMatchObject({ level: 40, code: 'UNAVAILABLE', cause: { name: 'Error', code: 'ECONNREFUSED' } });
    expect(entry.err).toBeUndefined();
    expect(JSON.stringify(entry)).not.toContain('    at ');
  }
});

it('an unexpected failure is still logged as an error with its stack', async () => {
  const auth = app.gateway.services.auth;
  const original = auth.me;
  auth.me = async () => {
    throw new Error('a defect');
  };
  try {
    entries.length = 0;
    expect((await acme.rest.get('/api/users/me')).status).toBe(500);
  } finally {
    auth.me = original;
  }
  const failure = entries.find((entry) => entry.msg === 'request failed');
  expect(failure).toMatchObject({ level: 50, err: { message: 'a defect' } });
  expect((failure!.err as { stack: string }).stack).toContain('    at ');
});
