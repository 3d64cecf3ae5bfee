import jwt from 'jsonwebtoken';
import { ApiKeysDocument, CreateAccessTokenDocument, MeDocument } from '../generated/graphql.js';
import { startTestApp, TEST_JWT_SECRET, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

async function token(rest = acme.rest): Promise<string> {
  const res = await rest.post('/api/auth/token');
  expect(res.status).toBe(200);
  return res.body.accessToken;
}

function sign(claims: Record<string, unknown>, options: jwt.SignOptions = {}, secret = TEST_JWT_SECRET): string {
  return jwt.sign(claims, secret, {
    algorithm: 'HS256',
    issuer: app.config.jwtIssuer,
    audience: app.config.jwtAudience,
    expiresIn: 600,
    ...options,
  });
}

async function expect401(headers: Record<string, string>): Promise<void> {
  const rest = await app.rest(headers).get('/api/users/me');
  expect(rest.status).toBe(401);
  expect(rest.headers.get('content-type')).toContain('application/problem+json');
  expect(rest.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', title: 'Unauthorized' });
  const gql = await app.graphql(headers).run(MeDocument);
  expect(gql.data ?? null).toBeNull();
  expect(gql.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
}

describe('the API key', () => {
  it('identifies the caller on GET /api/users/me and GraphQL me alike', async () => {
    const rest = await acme.rest.get('/api/users/me');
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({
      id: acme.userId,
      email: expect.stringContaining('@example.test'),
      name: expect.any(String),
      organizationId: acme.organizationId,
      organization: { id: acme.organizationId, name: 'Acme' },
    });
    const { me } = await acme.graphql.ok(MeDocument);
    expect(me).toEqual(rest.body);
  });

  it.each([
    ['no credentials', {}],
    ['an unknown key', { 'x-api-key': 'tag_unknownunknownunknownunknownunknown' }],
    ['an empty key', { 'x-api-key': '' }],
    ['a malformed Authorization header', { authorization: 'Token abc' }],
  ])('%s → 401 on both doors', async (_label, headers) => {
    await expect401(headers as Record<string, string>);
  });
});

describe('the bearer token', () => {
  it('is exchanged for a key on REST and GraphQL, and works on both doors', async () => {
    const res = await acme.rest.post('/api/auth/token');
    expect(res.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: app.config.jwtTtlSeconds });
    const bearer = { authorization: `Bearer ${res.body.accessToken}` };
    const me = await app.rest(bearer).get('/api/users/me');
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(acme.userId);
    const { apiKeys } = await app.graphql(bearer).ok(ApiKeysDocument);
    expect(apiKeys.length).toBeGreaterThan(0);

    const { createAccessToken } = await acme.graphql.ok(CreateAccessTokenDocument);
    expect(createAccessToken.tokenType).toBe('Bearer');
    expect((await app.rest({ authorization: `Bearer ${createAccessToken.accessToken}` }).get('/api/users/me')).status).toBe(200);
  });

  it('cannot mint another token by itself', async () => {
    const bearer = { authorization: `Bearer ${await token()}` };
    const rest = await app.rest(bearer).post('/api/auth/token');
    expect(rest.status).toBe(401);
    const gql = await app.graphql(bearer).run(CreateAccessTokenDocument);
    expect(gql.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('pins HS256, and checks signature, issuer, audience and expiry', async () => {
    const valid = await token();
    const claims = jwt.decode(valid) as jwt.JwtPayload;
    const { sub, org, akid } = claims;
    const [header, payload, signature] = valid.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, org: '00000000-0000-4000-8000-000000000000' })).toString('base64url')}.${signature}`;
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const cases = [
      tampered,
      none,
      sign({ sub, org, akid }, {}, 'another-secret-that-is-also-long-enough-for-hs256'),
      sign({ sub, org, akid }, { issuer: 'someone-else' }),
      sign({ sub, org, akid }, { audience: 'someone-else' }),
      jwt.sign({ sub, org, akid, exp: Math.floor(Date.now() / 1000) - 10 }, TEST_JWT_SECRET, { algorithm: 'HS256', issuer: app.config.jwtIssuer, audience: app.config.jwtAudience }),
      jwt.sign({ sub, org, akid }, TEST_JWT_SECRET, { algorithm: 'HS256', issuer: app.config.jwtIssuer, audience: app.config.jwtAudience }),
      jwt.sign({ sub, org, akid }, TEST_JWT_SECRET, { algorithm: 'HS384', issuer: app.config.jwtIssuer, audience: app.config.jwtAudience, expiresIn: 600 }),
      'not.a.jwt',
    ];
    for (const bad of cases) await expect401({ authorization: `Bearer ${bad}` });
    // the same claims, correctly signed, pass: the cases above fail for the reason they test
    expect((await app.rest({ authorization: `Bearer ${sign({ sub, org, akid })}` }).get('/api/users/me')).status).toBe(200);
  });

  it('stops working when the key it came from is deactivated', async () => {
    const { body: key } = await acme.rest.post('/api/auth/api-keys', { name: 'source', prefix: 'src_' });
    const holder = app.rest({ 'x-api-key': key.secret });
    const bearer = { authorization: `Bearer ${await token(holder)}` };
    expect((await app.rest(bearer).get('/api/users/me')).status).toBe(200);
    await acme.rest.put(`/api/auth/api-keys/${key.id}`, { isActive: false });
    await expect401(bearer);
  });
});

describe('public routes', () => {
  it('health, readiness, the OpenAPI document and schema introspection need no credentials', async () => {
    const anonymous = app.rest();
    expect((await anonymous.get('/healthz')).status).toBe(200);
    expect((await anonymous.get('/readyz')).body).toMatchObject({ status: 'ready' });
    expect((await anonymous.get('/api/openapi.json')).status).toBe(200);
    const introspection = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect(await introspection.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });
});
