import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
  // keep it in the cache right up to the expiry, then ask just after
  while (Date.now() < expiresAt - 200) {
    expect((await asKey.get('/api/users/me')).status).toBe(200);
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
