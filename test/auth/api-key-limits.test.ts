import { CreateApiKeyDocument, UpdateApiKeyDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser } from '../helpers/users.js';

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
    expect((await viaParent.graphql.run(CreateApiKeyDocument, { input: { name: 'later', prefix: 'c_', expiresAt: in2h() } })).errors?.[0]?.extensions.code).toBe('CONFLICT');
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
