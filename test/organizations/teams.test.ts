import {
  AddTeamMemberDocument,
  CreateTeamDocument,
  DeleteTeamDocument,
  RemoveTeamMemberDocument,
  TeamDocument,
  TeamsDocument,
  UpdateTeamDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, recordStatements, type TestUser } from '../helpers/users.js';

let app: TestApp;
let acme: TestOrganization;
let member: TestUser;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  member = await addUser(app, acme, 'member');
  admin = await addUser(app, acme, 'admin');
});
afterAll(() => app.close());

const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

describe('teams', () => {
  it('are created, read, renamed and deleted on both doors, the same shape on each', async () => {
    const rest = await acme.rest.post('/api/teams', { name: 'Sales' });
    expect(rest.status).toBe(201);
    expect(rest.body).toEqual({
      id: expect.any(String),
      organizationId: acme.organizationId,
      name: 'Sales',
      members: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const { team } = await acme.graphql.ok(TeamDocument, { id: rest.body.id });
    expect(team).toEqual(rest.body);

    const { createTeam } = await admin.graphql.ok(CreateTeamDocument, { input: { name: 'Support' } });
    const renamed = await acme.rest.put(`/api/teams/${createTeam.id}`, { name: 'Customer care' });
    expect(renamed.body.name).toBe('Customer care');
    const { updateTeam } = await acme.graphql.ok(UpdateTeamDocument, { id: rest.body.id, input: { name: 'Sales EMEA' } });
    expect(updateTeam.name).toBe('Sales EMEA');

    const { teams } = await member.graphql.ok(TeamsDocument, { sortBy: 'name', sortOrder: 'asc' });
    expect(teams.data.map((t) => t.name)).toEqual(['Customer care', 'Sales EMEA']);
    expect(teams.meta).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    expect((await member.rest.get('/api/teams?sortBy=name&sortOrder=asc')).body).toEqual(teams);

    expect((await acme.rest.delete(`/api/teams/${createTeam.id}`)).status).toBe(204);
    const { deleteTeam } = await acme.graphql.ok(DeleteTeamDocument, { id: rest.body.id });
    expect(deleteTeam.id).toBe(rest.body.id);
    expect((await acme.rest.get('/api/teams')).body.data).toEqual([]);
    expect((await acme.rest.get(`/api/teams/${rest.body.id}`)).status).toBe(404);
  });

  it('a name already used in the organization → 409 CONFLICT on both doors; another organization may use it', async () => {
    const { body: first } = await acme.rest.post('/api/teams', { name: 'Unique' });
    const { body: second } = await acme.rest.post('/api/teams', { name: 'Other name' });
    const rest = await acme.rest.post('/api/teams', { name: 'Unique' });
    expect(rest.status).toBe(409);
    expect(rest.body.code).toBe('CONFLICT');
    const gql = await acme.graphql.run(CreateTeamDocument, { input: { name: 'Unique' } });
    expect(gql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await acme.rest.put(`/api/teams/${second.id}`, { name: 'Unique' })).status).toBe(409);
    const gqlRename = await acme.graphql.run(UpdateTeamDocument, { id: second.id, input: { name: 'Unique' } });
    expect(gqlRename.errors?.[0]?.extensions.code).toBe('CONFLICT');
    // Keeping its own name is no clash.
    expect((await acme.rest.put(`/api/teams/${first.id}`, { name: 'Unique' })).status).toBe(200);
    const other = await app.organization('Other');
    expect((await other.rest.post('/api/teams', { name: 'Unique' })).status).toBe(201);
    const rows = await app.sql<{ n: number }>("select count(*)::int as n from teams where name = 'Unique' and organization_id = ?", [acme.organizationId]);
    expect(rows[0]!.n).toBe(1);
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a name of 256 characters', { name: 'n'.repeat(256) }],
  ])('%s → 400 naming name on both doors', async (_label, input) => {
    const rest = await acme.rest.post('/api/teams', input);
    expect(rest.status).toBe(400);
    expect(fieldsOf(rest.body.errors)).toEqual(['name']);
    const gql = await acme.graphql.run(CreateTeamDocument, { input });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['name']);
  });

  it('an unknown role → 400 naming role on both doors', async () => {
    const { body: team } = await acme.rest.post('/api/teams', { name: 'Roles' });
    const rest = await acme.rest.post(`/api/teams/${team.id}/members`, { userId: member.userId, role: 'boss' });
    expect(rest.status).toBe(400);
    expect(fieldsOf(rest.body.errors)).toEqual(['role']);
    const gql = await acme.graphql.run(AddTeamMemberDocument, { teamId: team.id, userId: member.userId, role: 'boss' as never });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('team members', () => {
  it('are added, re-roled and removed on both doors and shown with their user', async () => {
    const { body: team } = await acme.rest.post('/api/teams', { name: 'Members' });
    const added = await acme.rest.post(`/api/teams/${team.id}/members`, { userId: member.userId });
    expect(added.status).toBe(200);
    expect(added.body.members).toEqual([{ role: 'member', user: { id: member.userId, email: member.email, name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String) } }]);
    const { addTeamMember } = await acme.graphql.ok(AddTeamMemberDocument, { teamId: team.id, userId: admin.userId, role: 'lead' });
    expect(addTeamMember.members.map((m) => [m.user.id, m.role])).toEqual([
      [member.userId, 'member'],
      [admin.userId, 'lead'],
    ]);
    // Adding again changes the role, never a second membership.
    const { addTeamMember: again } = await acme.graphql.ok(AddTeamMemberDocument, { teamId: team.id, userId: member.userId, role: 'lead' });
    expect(again.members.map((m) => [m.user.email, m.role])).toEqual([
      [member.email, 'lead'],
      [admin.email, 'lead'],
    ]);
    const removed = await acme.rest.delete(`/api/teams/${team.id}/members/${member.userId}`);
    expect([removed.status, removed.body]).toEqual([204, undefined]);
    expect((await acme.rest.get(`/api/teams/${team.id}`)).body.members.map((m: { user: { id: string } }) => m.user.id)).toEqual([admin.userId]);
    const { removeTeamMember } = await acme.graphql.ok(RemoveTeamMemberDocument, { teamId: team.id, userId: admin.userId });
    expect(removeTeamMember.members).toEqual([]);
    const notMember = await acme.graphql.run(RemoveTeamMemberDocument, { teamId: team.id, userId: admin.userId });
    expect(notMember.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('a user of another organization → 404 NOT_FOUND on both doors, nothing added', async () => {
    const other = await app.organization('Elsewhere');
    const { body: team } = await acme.rest.post('/api/teams', { name: 'Closed' });
    const rest = await acme.rest.post(`/api/teams/${team.id}/members`, { userId: other.userId });
    expect(rest.status).toBe(404);
    const gql = await acme.graphql.run(AddTeamMemberDocument, { teamId: team.id, userId: other.userId });
    expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.post(`/api/teams/${team.id}/members`, { userId: 'not-a-uuid' })).status).toBe(404);
    expect((await acme.rest.get(`/api/teams/${team.id}`)).body.members).toEqual([]);
  });

  it('are loaded for every team of a list in one statement', async () => {
    const org = await app.organization('Batch');
    const users = await Promise.all([addUser(app, org), addUser(app, org), addUser(app, org)]);
    for (let i = 0; i < 6; i++) {
      const { createTeam } = await org.graphql.ok(CreateTeamDocument, { input: { name: `Team ${i}` } });
      await org.graphql.ok(AddTeamMemberDocument, { teamId: createTeam.id, userId: users[i % 3]!.userId });
    }
    const statements = await recordStatements(app, async () => {
      const { teams } = await org.graphql.ok(TeamsDocument, { sortBy: 'name', sortOrder: 'asc' });
      expect(teams.data.map((team) => team.members[0]!.user.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => users[i % 3]!.userId));
    });
    expect(statements.filter((sql) => /from "team_memberships"/.test(sql))).toHaveLength(1);
  });
});

describe('a member (not owner or admin)', () => {
  it('reads teams but gets 403 FORBIDDEN on every change, on both doors, and nothing changes', async () => {
    const { body: team } = await acme.rest.post('/api/teams', { name: 'Guarded' });
    expect((await member.rest.get(`/api/teams/${team.id}`)).status).toBe(200);
    const responses = [
      await member.rest.post('/api/teams', { name: 'Mine' }),
      await member.rest.put(`/api/teams/${team.id}`, { name: 'Mine' }),
      await member.rest.delete(`/api/teams/${team.id}`),
      await member.rest.post(`/api/teams/${team.id}/members`, { userId: member.userId }),
      await member.rest.delete(`/api/teams/${team.id}/members/${member.userId}`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    const runs = [
      await member.graphql.run(CreateTeamDocument, { input: { name: 'Mine' } }),
      await member.graphql.run(UpdateTeamDocument, { id: team.id, input: { name: 'Mine' } }),
      await member.graphql.run(DeleteTeamDocument, { id: team.id }),
      await member.graphql.run(AddTeamMemberDocument, { teamId: team.id, userId: member.userId }),
      await member.graphql.run(RemoveTeamMemberDocument, { teamId: team.id, userId: member.userId }),
    ];
    for (const run of runs) expect(run.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect((await acme.rest.get(`/api/teams/${team.id}`)).body).toMatchObject({ name: 'Guarded', members: [] });
    expect((await acme.rest.get('/api/teams')).body.data.map((t: { name: string }) => t.name)).not.toContain('Mine');
  });
});
