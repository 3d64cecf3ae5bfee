import jwt from 'jsonwebtoken';
import {
  ApiKeyDocument,
  ApiKeysDocument,
  CreateAccessTokenDocument,
  CreateApiKeyDocument,
  DeleteApiKeyDocument,
  MeDocument,
  UpdateApiKeyDocument,
} from '../generated/graphql.js';
import { startTestApp, TEST_JWT_SECRET, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createHash } from 'node:crypto';
import { addUser } from '../helpers/users.js';

// Authentication: API keys, their limits and cache, and tokens, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('authentication', () => {
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
        role: 'owner',
        permissions: expect.arrayContaining(['agents.manage', 'users.manage', 'organization.manage']),
      });
      const { me } = await acme.graphql.ok(MeDocument);
      expect(me).toEqual(rest.body);
    });

    // The console (and any UI) hides what the role may not do: the list is the matrix the services enforce.
    it('names the caller’s role and what it may do: a member talks to agents and keeps its keys, and no more', async () => {
      const member = await addUser(app, acme, 'member');
      const admin = await addUser(app, acme, 'admin');
      const rest = await member.rest.get('/api/users/me');
      expect([rest.body.role, rest.body.permissions]).toEqual(['member', ['agents.talk', 'apiKeys.own']]);
      expect((await member.graphql.ok(MeDocument)).me).toEqual(rest.body);
      const asAdmin = (await admin.graphql.ok(MeDocument)).me;
      expect(asAdmin.role).toBe('admin');
      expect(asAdmin.permissions).toEqual(expect.arrayContaining(['agents.manage', 'executions.control', 'webhooks.manage']));
      expect(asAdmin.permissions).not.toContain('users.manage');
      expect(asAdmin.permissions).not.toContain('organization.manage');
      // A role changed applies at once, as the services' checks do.
      expect((await acme.rest.put(`/api/users/${member.userId}`, { role: 'admin' })).status).toBe(200);
      expect((await member.rest.get('/api/users/me')).body.role).toBe('admin');
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
        jwt.sign({ sub, org, akid, exp: Math.floor(Date.now() / 1000) - 10 }, TEST_JWT_SECRET, {
          algorithm: 'HS256',
          issuer: app.config.jwtIssuer,
          audience: app.config.jwtAudience,
        }),
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
});

describe('api-keys', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  const BASE62_PART = /^[0-9A-Za-z]{32,}$/;

  describe('creating a key', () => {
    it('returns the secret once on REST: prefix + at least 32 base62 characters', async () => {
      const res = await acme.rest.post('/api/auth/api-keys', { name: 'ci', prefix: 'ci_' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'ci', keyPrefix: 'ci_', isActive: true, expiresAt: null });
      expect(res.body.secret.startsWith('ci_')).toBe(true);
      expect(res.body.secret.slice(3)).toMatch(BASE62_PART);
      expect(Date.parse(res.body.createdAt)).not.toBeNaN();

      const fetched = await acme.rest.get(`/api/auth/api-keys/${res.body.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).not.toHaveProperty('secret');
      const listed = await acme.rest.get('/api/auth/api-keys');
      expect(listed.body.apiKeys.map((key: { id: string }) => key.id)).toContain(res.body.id);
      expect(JSON.stringify(listed.body)).not.toContain(res.body.secret);
    });

    it('returns the secret once on GraphQL, and the key works at once', async () => {
      const { createApiKey } = await acme.graphql.ok(CreateApiKeyDocument, { input: { name: 'gql', prefix: 'gq-' } });
      expect(createApiKey.secret.startsWith('gq-')).toBe(true);
      const { apiKeys } = await acme.graphql.ok(ApiKeysDocument);
      expect(apiKeys.some((key) => key.id === createApiKey.id)).toBe(true);
      expect(JSON.stringify(apiKeys)).not.toContain(createApiKey.secret);
      const me = await app.rest({ 'x-api-key': createApiKey.secret }).get('/api/users/me');
      expect(me.status).toBe(200);
      expect(me.body.organizationId).toBe(acme.organizationId);
    });

    it('stores only the SHA-256 hash, never the plaintext', async () => {
      const { body } = await acme.rest.post('/api/auth/api-keys', { name: 'stored', prefix: 'st_' });
      const rows = await app.sql('select * from api_keys where id = ?', [body.id]);
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(body.secret);
      expect(JSON.stringify(rows)).not.toContain(body.secret.slice(3));
      expect(rows[0]!.key_hash).toBe(createHash('sha256').update(body.secret).digest('hex'));
    });
  });

  describe('updating a key', () => {
    it('changes only the fields that are sent and moves updatedAt, on both doors', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'before', prefix: 'up_', expiresAt: '2099-01-01T00:00:00Z' });
      await new Promise((resolve) => setTimeout(resolve, 15));
      const renamed = await acme.rest.put(`/api/auth/api-keys/${created.id}`, { name: 'after' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'after', isActive: true, expiresAt: '2099-01-01T00:00:00.000Z', keyPrefix: 'up_' });
      expect(renamed.body).not.toHaveProperty('secret');
      expect(Date.parse(renamed.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
      expect(renamed.body.createdAt).toBe(created.createdAt);

      const { updateApiKey } = await acme.graphql.ok(UpdateApiKeyDocument, { id: created.id, input: { expiresAt: '2098-01-01T00:00:00Z' } });
      expect(updateApiKey).toMatchObject({ name: 'after', expiresAt: '2098-01-01T00:00:00.000Z', isActive: true });
    });

    it('a deactivated key gets 401 on both doors, and stays dead (see the api-key-limits describe)', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'toggle', prefix: 'tg_' });
      const holder = { 'x-api-key': created.secret };
      expect((await acme.rest.put(`/api/auth/api-keys/${created.id}`, { isActive: false })).body.isActive).toBe(false);
      const rest = await app.rest(holder).get('/api/users/me');
      expect(rest.status).toBe(401);
      expect(rest.body.code).toBe('UNAUTHENTICATED');
      const gql = await app.graphql(holder).run(ApiKeysDocument);
      expect(gql.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
      const revived = await acme.graphql.run(UpdateApiKeyDocument, { id: created.id, input: { isActive: true } });
      expect(revived.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await app.rest(holder).get('/api/users/me')).status).toBe(401);
    });

    it('an expired key gets 401 exactly like an unknown one', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', {
        name: 'short',
        prefix: 'ex_',
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      });
      expect((await app.rest({ 'x-api-key': created.secret }).get('/api/users/me')).status).toBe(200);
      await app.sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [created.id]);
      // Changed behind the process's back, as another replica would: the key cache keeps it at most its TTL.
      await new Promise((resolve) => setTimeout(resolve, app.config.apiKeyCacheMs + 100));
      const expired = await app.rest({ 'x-api-key': created.secret }).get('/api/users/me');
      const unknown = await app.rest({ 'x-api-key': 'ex_doesnotexist' }).get('/api/users/me');
      expect(expired.status).toBe(401);
      expect(expired.body.detail).toBe(unknown.body.detail);
    });
  });

  describe('deleting a key', () => {
    it('answers {message}, then the key is gone and no longer authenticates', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'doomed', prefix: 'dd_' });
      const res = await acme.rest.delete(`/api/auth/api-keys/${created.id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(typeof res.body.message).toBe('string');
      expect((await acme.rest.get(`/api/auth/api-keys/${created.id}`)).status).toBe(404);
      expect((await app.rest({ 'x-api-key': created.secret }).get('/api/users/me')).status).toBe(401);
      const again = await acme.graphql.run(DeleteApiKeyDocument, { id: created.id });
      expect(again.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('another organization', () => {
    it('gets 404 for every operation on a key it does not own, on both doors', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'private', prefix: 'pv_' });
      const id = created.id as string;
      expect((await other.rest.get(`/api/auth/api-keys/${id}`)).status).toBe(404);
      expect((await other.rest.put(`/api/auth/api-keys/${id}`, { name: 'stolen' })).status).toBe(404);
      expect((await other.rest.delete(`/api/auth/api-keys/${id}`)).status).toBe(404);
      for (const result of [
        await other.graphql.run(ApiKeyDocument, { id }),
        await other.graphql.run(UpdateApiKeyDocument, { id, input: { name: 'stolen' } }),
        await other.graphql.run(DeleteApiKeyDocument, { id }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      const { apiKeys } = await other.graphql.ok(ApiKeysDocument);
      expect(apiKeys.map((key) => key.id)).not.toContain(id);
      expect((await acme.rest.get(`/api/auth/api-keys/${id}`)).body.name).toBe('private');
    });

    it('a non-UUID id is simply not found', async () => {
      const res = await acme.rest.get('/api/auth/api-keys/not-a-uuid');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
      expect((await acme.graphql.run(ApiKeyDocument, { id: 'not-a-uuid' })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('bad input gets the same answer on both doors', () => {
    const fieldsOf = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();

    const createCases: [string, Record<string, unknown>, string[]][] = [
      ['name of 256 characters', { name: 'n'.repeat(256), prefix: 'ok_' }, ['name']],
      ['empty name', { name: '', prefix: 'ok_' }, ['name']],
      ['prefix of 21 characters', { name: 'n', prefix: 'p'.repeat(21) }, ['prefix']],
      ['prefix with a space', { name: 'n', prefix: 'a b' }, ['prefix']],
      ['expiresAt that is not a date', { name: 'n', prefix: 'ok_', expiresAt: 'tomorrow' }, ['expiresAt']],
      ['expiresAt in the past', { name: 'n', prefix: 'ok_', expiresAt: '2001-01-01T00:00:00Z' }, ['expiresAt']],
      ['name of the wrong type', { name: 42, prefix: 'ok_' }, ['name']],
      ['missing prefix', { name: 'n' }, ['prefix']],
    ];

    it.each(createCases)('create with %s → 400 BAD_USER_INPUT naming the field', async (_label, input, fields) => {
      const rest = await acme.rest.post('/api/auth/api-keys', input);
      expect(rest.status).toBe(400);
      expect(rest.headers.get('content-type')).toContain('application/problem+json');
      expect(rest.body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', title: 'Bad Request' });
      expect(rest.body.requestId).toEqual(expect.any(String));
      expect(fieldsOf(rest.body.errors)).toEqual(fields);

      const gql = await acme.graphql.run(CreateApiKeyDocument, { input: input as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(fields);
    });

    it('an unknown field on an update → 400 naming it, on both doors', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'u', prefix: 'uf_' });
      const rest = await acme.rest.put(`/api/auth/api-keys/${created.id}`, { secret: 'mine' });
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual(['secret']);
      const gql = await acme.graphql.run(UpdateApiKeyDocument, { id: created.id, input: { secret: 'mine' } as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['secret']);
    });

    it('a null name on an update is refused rather than stored', async () => {
      const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'keep', prefix: 'nn_' });
      const rest = await acme.rest.put(`/api/auth/api-keys/${created.id}`, { name: null });
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual(['name']);
      const gql = await acme.graphql.run(UpdateApiKeyDocument, { id: created.id, input: { name: null } });
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['name']);
      expect((await acme.rest.get(`/api/auth/api-keys/${created.id}`)).body.name).toBe('keep');
    });

    it('malformed JSON → 400 problem+json', async () => {
      const res = await acme.rest.request('POST', '/api/auth/api-keys', undefined, '{"name": ');
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BAD_USER_INPUT');
    });
  });
});

describe('api-key-limits', () => {
  // Finding 7: a key cannot escape its limits, on either door.
  let app: TestApp;
  let acme: TestOrganization;

  const MAX = 5;
  beforeAll(async () => {
    app = await startTestApp({ apiKeysMaxPerUser: MAX });
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  const in1h = () => new Date(Date.now() + 3_600_000).toISOString();
  const in2h = () => new Date(Date.now() + 7_200_000).toISOString();
  // PGlite answers a Date, pg may answer a string: both become an ISO string.
  const expiresOf = async (id: string) => {
    const value = (await app.sql<{ expires_at: Date | string | null }>('select expires_at from api_keys where id = ?', [id]))[0]!.expires_at;
    return value === null ? null : new Date(value);
  };

  describe('the per-user cap (API_KEYS_MAX_PER_USER)', () => {
    it('a user holds at most the cap of usable keys: 409 on both doors; a deactivated or expired key frees a place', async () => {
      const user = await addUser(app, acme, 'member'); // holds 1 key
      const made: string[] = [];
      for (let i = 1; i < MAX; i++) {
        const res = await user.rest.post('/api/auth/api-keys', { name: `k${i}`, prefix: 'k_' });
        expect(res.status).toBe(201);
        made.push(res.body.id);
      }
      const rest = await user.rest.post('/api/auth/api-keys', { name: 'over', prefix: 'k_' });
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toContain(`at most ${MAX} active API keys`);
      const gql = await user.graphql.run(CreateApiKeyDocument, { input: { name: 'over', prefix: 'k_' } });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect(await app.sql('select id from api_keys where user_id = ?', [user.userId])).toHaveLength(MAX);

      expect((await user.rest.put(`/api/auth/api-keys/${made[0]}`, { isActive: false })).status).toBe(200);
      expect((await user.graphql.run(CreateApiKeyDocument, { input: { name: 'freed', prefix: 'k_' } })).errors).toBeUndefined();
      await app.sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [made[1]]);
      expect((await user.rest.post('/api/auth/api-keys', { name: 'freed again', prefix: 'k_' })).status).toBe(201);
    });

    it('the cap is per user: another user of the organization is not held by it', async () => {
      const other = await addUser(app, acme, 'member');
      expect((await other.rest.post('/api/auth/api-keys', { name: 'mine', prefix: 'k_' })).status).toBe(201);
    });
  });

  // Each test works with a fresh user, so the cap of this file's app never gets in the way.
  let k: Awaited<ReturnType<typeof addUser>>;
  beforeEach(async () => {
    k = await addUser(app, acme, 'admin');
  });

  describe('expiry', () => {
    it('cannot be removed: expiresAt null on an expiring key → 409 on both doors, unchanged', async () => {
      const { body: key } = await k.rest.post('/api/auth/api-keys', { name: 'e', prefix: 'e_', expiresAt: in1h() });
      const rest = await k.rest.put(`/api/auth/api-keys/${key.id}`, { expiresAt: null });
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      const gql = await k.graphql.run(UpdateApiKeyDocument, { id: key.id, input: { expiresAt: null } });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await expiresOf(key.id))?.toISOString()).toBe(key.expiresAt);
    });

    it('a key can remove its own expiry neither (the finding’s example)', async () => {
      const { body: key } = await k.rest.post('/api/auth/api-keys', { name: 'self', prefix: 's_', expiresAt: in1h() });
      const self = app.rest({ 'x-api-key': key.secret });
      expect((await self.put(`/api/auth/api-keys/${key.id}`, { expiresAt: null })).status).toBe(409);
      expect((await self.put(`/api/auth/api-keys/${key.id}`, { expiresAt: '2099-01-01T00:00:00Z' })).status).toBe(409);
      expect((await expiresOf(key.id))?.toISOString()).toBe(key.expiresAt);
    });

    it('cannot be pushed back (409 on both doors), only brought forward (200)', async () => {
      const { body: key } = await k.rest.post('/api/auth/api-keys', { name: 'e2', prefix: 'e_', expiresAt: in1h() });
      expect((await k.rest.put(`/api/auth/api-keys/${key.id}`, { expiresAt: in2h() })).status).toBe(409);
      expect((await k.graphql.run(UpdateApiKeyDocument, { id: key.id, input: { expiresAt: in2h() } })).errors?.[0]?.extensions.code).toBe('CONFLICT');
      const sooner = new Date(Date.now() + 600_000).toISOString();
      expect((await k.rest.put(`/api/auth/api-keys/${key.id}`, { expiresAt: sooner })).body.expiresAt).toBe(sooner);
      const { body: open } = await k.rest.post('/api/auth/api-keys', { name: 'open', prefix: 'o_' });
      expect((await k.graphql.ok(UpdateApiKeyDocument, { id: open.id, input: { expiresAt: in1h() } })).updateApiKey.expiresAt).not.toBeNull();
    });

    it('a key made by an expiring key expires no later than it: inherited when absent, 409 when later, on both doors', async () => {
      const { body: parent } = await k.rest.post('/api/auth/api-keys', { name: 'parent', prefix: 'p_', expiresAt: in1h() });
      const viaParent = { rest: app.rest({ 'x-api-key': parent.secret }), graphql: app.graphql({ 'x-api-key': parent.secret }) };
      const child = await viaParent.rest.post('/api/auth/api-keys', { name: 'child', prefix: 'c_' });
      expect([child.status, child.body.expiresAt]).toEqual([201, parent.expiresAt]);
      const { createApiKey } = await viaParent.graphql.ok(CreateApiKeyDocument, { input: { name: 'child2', prefix: 'c_' } });
      expect(createApiKey.expiresAt).toBe(parent.expiresAt);
      const later = await viaParent.rest.post('/api/auth/api-keys', { name: 'later', prefix: 'c_', expiresAt: in2h() });
      expect([later.status, later.body.code]).toEqual([409, 'CONFLICT']);
      expect(
        (await viaParent.graphql.run(CreateApiKeyDocument, { input: { name: 'later', prefix: 'c_', expiresAt: in2h() } })).errors?.[0]?.extensions.code,
      ).toBe('CONFLICT');
      // A token minted from the parent is held to the same ceiling.
      const token = (await viaParent.rest.post('/api/auth/token')).body.accessToken as string;
      const byToken = await app.rest({ authorization: `Bearer ${token}` }).post('/api/auth/api-keys', { name: 't', prefix: 't_' });
      expect(byToken.body.expiresAt).toBe(parent.expiresAt);
    });
  });

  describe('deactivated and expired keys', () => {
    it('a deactivated key stays dead: a sibling’s revive → 409 on both doors, and its old JWT stays 401', async () => {
      const { body: victim } = await k.rest.post('/api/auth/api-keys', { name: 'victim', prefix: 'v_' });
      const token = (await app.rest({ 'x-api-key': victim.secret }).post('/api/auth/token')).body.accessToken as string;
      const bearer = app.rest({ authorization: `Bearer ${token}` });
      expect((await bearer.get('/api/users/me')).status).toBe(200);
      expect((await k.rest.put(`/api/auth/api-keys/${victim.id}`, { isActive: false })).status).toBe(200);
      expect((await bearer.get('/api/users/me')).status).toBe(401);

      const rest = await k.rest.put(`/api/auth/api-keys/${victim.id}`, { isActive: true });
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      const gql = await k.graphql.run(UpdateApiKeyDocument, { id: victim.id, input: { isActive: true } });
      expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await bearer.get('/api/users/me')).status).toBe(401);
      expect((await app.rest({ 'x-api-key': victim.secret }).get('/api/users/me')).status).toBe(401);
      expect((await app.sql<{ is_active: boolean }>('select is_active from api_keys where id = ?', [victim.id]))[0]!.is_active).toBe(false);
      // Deactivating again and renaming a dead key are harmless and allowed.
      expect((await k.rest.put(`/api/auth/api-keys/${victim.id}`, { name: 'dead', isActive: false })).status).toBe(200);
    });

    it('an expired key cannot be changed (409 on both doors) — only deleted', async () => {
      const { body: key } = await k.rest.post('/api/auth/api-keys', { name: 'old', prefix: 'x_', expiresAt: in1h() });
      await app.sql(`update api_keys set expires_at = now() - interval '1 second' where id = ?`, [key.id]);
      for (const input of [{ isActive: true }, { name: 'renamed' }, { expiresAt: null }]) {
        expect((await k.rest.put(`/api/auth/api-keys/${key.id}`, input)).status).toBe(409);
        expect((await k.graphql.run(UpdateApiKeyDocument, { id: key.id, input })).errors?.[0]?.extensions.code).toBe('CONFLICT');
      }
      expect((await app.rest({ 'x-api-key': key.secret }).get('/api/users/me')).status).toBe(401);
      expect((await k.rest.delete(`/api/auth/api-keys/${key.id}`)).status).toBe(200);
    });
  });
});

describe('key-cache', () => {
  // Authenticated keys are kept API_KEY_CACHE_MS (500 ms by default) so a burst of requests looks a key up
  // once; these tests hold the promises that make that safe: a change made through the API acts on the
  // very next request, and one made behind this process's back (another replica, the CLI) within the TTL.
  let app: TestApp;
  let acme: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
  });
  afterAll(() => app.close());

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const ME = '{ me { id } }';

  async function newKey(): Promise<{ id: string; secret: string }> {
    const created = await acme.rest.post('/api/auth/api-keys', { name: 'cached', prefix: 'kc_' });
    expect(created.status).toBe(201);
    return created.body;
  }

  async function statusOf(secret: string): Promise<{ rest: number; graphql: string | undefined }> {
    const rest = await app.rest({ 'x-api-key': secret }).get('/api/auth/api-keys');
    const graphql = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': secret },
      body: JSON.stringify({ query: ME }),
    }).then((res) => res.json() as Promise<{ errors?: { extensions?: { code?: string } }[] }>);
    return { rest: rest.status, graphql: graphql.errors?.[0]?.extensions?.code };
  }

  it('the default keeps a key half a second, and the setting is bounded by a second', () => {
    expect(app.config.apiKeyCacheMs).toBe(500);
  });

  it('a key deactivated through the API is refused on the very next request, on both doors', async () => {
    const key = await newKey();
    expect(await statusOf(key.secret)).toEqual({ rest: 200, graphql: undefined });
    expect((await acme.rest.put(`/api/auth/api-keys/${key.id}`, { isActive: false })).status).toBe(200);
    expect(await statusOf(key.secret)).toEqual({ rest: 401, graphql: 'UNAUTHENTICATED' });
  });

  it('a key deleted through the API is refused on the very next request', async () => {
    const key = await newKey();
    expect((await statusOf(key.secret)).rest).toBe(200);
    expect((await acme.rest.delete(`/api/auth/api-keys/${key.id}`)).status).toBe(200);
    expect(await statusOf(key.secret)).toEqual({ rest: 401, graphql: 'UNAUTHENTICATED' });
  });

  it('a user demoted through the API acts with the new role on the very next request', async () => {
    const added = await acme.rest.post('/api/users', { email: `admin-${Date.now()}@acme.test`, role: 'admin' });
    expect(added.status).toBe(201);
    const secret: string = added.body.apiKey.secret;
    const asUser = app.rest({ 'x-api-key': secret });
    const userId: string = added.body.user.id;
    // changing a role is the owner's alone: the user tries to confirm its own role
    const tryOwnerOnly = async (role: string) => (await asUser.put(`/api/users/${userId}`, { role })).status;
    expect(await tryOwnerOnly('admin')).toBe(403);
    expect((await acme.rest.put(`/api/users/${userId}`, { role: 'owner' })).status).toBe(200);
    expect(await tryOwnerOnly('owner')).toBe(200);
    expect((await acme.rest.put(`/api/users/${userId}`, { role: 'member' })).status).toBe(200);
    expect(await tryOwnerOnly('member')).toBe(403);
  });

  it('a key deactivated behind this process (another replica, the CLI, SQL) is refused once the TTL has run', async () => {
    const key = await newKey();
    expect((await statusOf(key.secret)).rest).toBe(200);
    await app.sql('update api_keys set is_active = false where id = ?', [key.id]);
    await sleep(app.config.apiKeyCacheMs + 100);
    expect(await statusOf(key.secret)).toEqual({ rest: 401, graphql: 'UNAUTHENTICATED' });
  });

  it('an expiry is exact while the key is kept: the cache checks it on every request', async () => {
    const expiresAt = Date.now() + 1_500;
    const created = await acme.rest.post('/api/auth/api-keys', { name: 'soon', prefix: 'ks_', expiresAt: new Date(expiresAt).toISOString() });
    expect(created.status).toBe(201);
    const asKey = app.rest({ 'x-api-key': created.body.secret });
    expect((await asKey.get('/api/users/me')).status).toBe(200);
    // keep it in the cache right up to the expiry, then ask just after; on a loaded machine a request
    // sent before the expiry may be checked after it, and then 401 is the right answer
    while (Date.now() < expiresAt - 200) {
      const { status } = await asKey.get('/api/users/me');
      expect(status === 200 || (status === 401 && Date.now() >= expiresAt)).toBe(true);
      await sleep(100);
    }
    await sleep(expiresAt - Date.now() + 20);
    expect((await asKey.get('/api/users/me')).status).toBe(401);
  });

  it('a refused key is never kept: one made usable behind this process works at once', async () => {
    const key = await newKey();
    await app.sql('update api_keys set is_active = false where id = ?', [key.id]);
    await sleep(app.config.apiKeyCacheMs + 100);
    expect((await statusOf(key.secret)).rest).toBe(401);
    await app.sql('update api_keys set is_active = true where id = ?', [key.id]);
    expect((await statusOf(key.secret)).rest).toBe(200);
  });
});
