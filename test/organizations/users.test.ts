import { AddUserDocument, MeDocument, RemoveUserDocument, UpdateUserRoleDocument, UsersDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser } from '../helpers/users.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(() => app.close());

const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

describe('adding users', () => {
  it('an owner adds a user with a role on REST; the answer carries a first key that works with that role', async () => {
    const res = await acme.rest.post('/api/users', { email: 'Ann@Example.test', name: 'Ann', role: 'member' });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({ id: expect.any(String), email: 'ann@example.test', name: 'Ann', role: 'member', createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(res.body.apiKey).toMatchObject({ id: expect.any(String), keyPrefix: 'tag_', isActive: true, expiresAt: null, secret: expect.stringMatching(/^tag_[A-Za-z0-9]{40}$/) });
    const ann = app.rest({ 'x-api-key': res.body.apiKey.secret });
    expect((await ann.get('/api/users/me')).body).toMatchObject({ id: res.body.user.id, organizationId: acme.organizationId });
    expect((await ann.post('/api/audience', { name: 'No' })).status).toBe(403);
    // The secret is shown once: the key list never carries it.
    expect(JSON.stringify((await ann.get('/api/auth/api-keys')).body)).not.toContain(res.body.apiKey.secret);
  });

  it('an owner adds an admin on GraphQL, who may then manage audiences but not users', async () => {
    const { addUser: added } = await acme.graphql.ok(AddUserDocument, { input: { email: 'bob@example.test', role: 'admin' } });
    expect(added.user).toMatchObject({ email: 'bob@example.test', name: 'bob', role: 'admin' });
    const bob = app.rest({ 'x-api-key': added.apiKey.secret });
    expect((await bob.post('/api/audience', { name: 'Bob’s' })).status).toBe(201);
    expect((await bob.post('/api/users', { email: 'x@example.test', role: 'member' })).status).toBe(403);
  });

  it('an email already in the organization → 409 on both doors; another organization may use it', async () => {
    await acme.rest.post('/api/users', { email: 'dup@example.test', role: 'member' });
    const rest = await acme.rest.post('/api/users', { email: 'DUP@example.test', role: 'admin' });
    expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
    const gql = await acme.graphql.run(AddUserDocument, { input: { email: 'dup@example.test', role: 'admin' } });
    expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await other.rest.post('/api/users', { email: 'dup@example.test', role: 'member' })).status).toBe(201);
  });

  it.each([
    ['a bad email', { email: 'not-an-email', role: 'member' }, ['email']],
    ['an unknown role', { email: 'c@example.test', role: 'god' }, ['role']],
    ['an empty name', { email: 'c@example.test', name: '', role: 'member' }, ['name']],
  ])('%s → 400 naming the field on both doors', async (_label, input, fields) => {
    const rest = await acme.rest.post('/api/users', input);
    expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(fieldsOf(rest.body.errors)).toEqual(fields);
    const gql = await acme.graphql.run(AddUserDocument, { input: input as never });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    if (input.role !== 'god') expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(fields);
  });
});

describe('listing users', () => {
  it('is paged {data, meta}, searchable, the same on both doors, and shows only the caller’s organization', async () => {
    const member = await addUser(app, acme, 'member');
    const rest = await member.rest.get('/api/users?limit=2&sortBy=email&sortOrder=asc');
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(2);
    expect(rest.body.meta).toMatchObject({ page: 1, limit: 2, hasPreviousPage: false });
    const { users } = await member.graphql.ok(UsersDocument, { limit: 2, sortBy: 'email', sortOrder: 'asc' as never });
    expect(users).toEqual(rest.body);
    const all = await acme.rest.get('/api/users?limit=100');
    expect(all.body.data.map((user: { id: string }) => user.id)).not.toContain(other.userId);
    expect((await acme.rest.get('/api/users?search=ann@')).body.data.map((user: { email: string }) => user.email)).toEqual(['ann@example.test']);
    expect((await acme.rest.get('/api/users?sortBy=password')).status).toBe(400);
  });
});

describe('roles and removal', () => {
  it('an owner changes a role on both doors; a bad role → 400 on both', async () => {
    const user = await addUser(app, acme, 'member');
    const rest = await acme.rest.put(`/api/users/${user.userId}`, { role: 'admin' });
    expect([rest.status, rest.body.role]).toEqual([200, 'admin']);
    const { updateUserRole } = await acme.graphql.ok(UpdateUserRoleDocument, { id: user.userId, role: 'owner' as never });
    expect(updateUserRole.role).toBe('owner');
    const bad = await acme.rest.put(`/api/users/${user.userId}`, { role: 'root' });
    expect([bad.status, fieldsOf(bad.body.errors)]).toEqual([400, ['role']]);
    const badGql = await acme.graphql.run(UpdateUserRoleDocument, { id: user.userId, role: 'root' as never });
    expect(badGql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('the last owner can be neither demoted nor removed (409 on both doors); with a second owner it can', async () => {
    const org = await app.organization('Solo');
    const demote = await org.rest.put(`/api/users/${org.userId}`, { role: 'admin' });
    expect([demote.status, demote.body.code]).toEqual([409, 'CONFLICT']);
    const remove = await org.rest.delete(`/api/users/${org.userId}`);
    expect([remove.status, remove.body.code]).toEqual([409, 'CONFLICT']);
    expect((await org.graphql.run(UpdateUserRoleDocument, { id: org.userId, role: 'member' as never })).errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await org.graphql.run(RemoveUserDocument, { id: org.userId })).errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await app.sql<{ role: string }>('select role from users where id = ?', [org.userId]))[0]!.role).toBe('owner');

    const second = await addUser(app, org, 'owner');
    expect((await second.rest.put(`/api/users/${org.userId}`, { role: 'admin' })).status).toBe(200);
    // Now `second` is the last owner: it cannot demote itself.
    expect((await second.rest.put(`/api/users/${second.userId}`, { role: 'member' })).status).toBe(409);
  });

  it('removing a user kills its keys and tokens at once (REST), and GraphQL removes too', async () => {
    const user = await addUser(app, acme, 'admin');
    const token = (await user.rest.post('/api/auth/token')).body.accessToken as string;
    const bearer = app.rest({ authorization: `Bearer ${token}` });
    expect((await bearer.get('/api/users/me')).status).toBe(200);
    const res = await acme.rest.delete(`/api/users/${user.userId}`);
    expect([res.status, res.body]).toEqual([204, undefined]);
    expect((await user.rest.get('/api/users/me')).status).toBe(401);
    expect((await bearer.get('/api/users/me')).status).toBe(401);
    expect(await app.sql('select id from api_keys where user_id = ?', [user.userId])).toEqual([]);

    const again = await addUser(app, acme, 'member');
    expect((await acme.graphql.ok(RemoveUserDocument, { id: again.userId })).removeUser.id).toBe(again.userId);
    expect((await again.graphql.run(MeDocument)).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('another organization’s user, an unknown id and a non-UUID → 404 on both doors', async () => {
    for (const id of [other.userId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      expect((await acme.rest.put(`/api/users/${id}`, { role: 'member' })).status).toBe(404);
      expect((await acme.rest.delete(`/api/users/${id}`)).status).toBe(404);
      expect((await acme.graphql.run(UpdateUserRoleDocument, { id, role: 'member' as never })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      expect((await acme.graphql.run(RemoveUserDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    }
    expect((await app.sql<{ role: string }>('select role from users where id = ?', [other.userId]))[0]!.role).toBe('owner');
  });
});
