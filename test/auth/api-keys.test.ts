import { createHash } from 'node:crypto';
import {
  ApiKeyDocument,
  ApiKeysDocument,
  CreateApiKeyDocument,
  DeleteApiKeyDocument,
  UpdateApiKeyDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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

  it('a deactivated key gets 401 on both doors, and stays dead (see api-key-limits.test.ts)', async () => {
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
    const { body: created } = await acme.rest.post('/api/auth/api-keys', { name: 'short', prefix: 'ex_', expiresAt: new Date(Date.now() + 60_000).toISOString() });
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
