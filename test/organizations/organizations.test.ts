import { RequestContext } from '@mikro-orm/core';
import {
  CreateToolDocument,
  UpdateToolDocument,
  DeleteToolDocument,
  RotateToolSecretDocument,
  CreateMcpServerDocument,
  UpdateMcpServerDocument,
  RefreshMcpServerDocument,
  DeleteMcpServerDocument,
  DeleteCallRecordingDocument,
  ActivateAgentDocument,
  AddDoNotCallDocument,
  ImportDoNotCallDocument,
  RemoveDoNotCallDocument,
  ActivateProgramDocument,
  AddAudienceMembersDocument,
  AddCreditsDocument,
  AddDocumentDocument,
  AddTeamMemberDocument,
  AddUserDocument,
  BusinessEntitiesDocument,
  BusinessEntityDocument,
  ContactsWithEntitiesDocument,
  ControlExecutionDocument,
  CreateAgentDocument,
  CreateAudienceDocument,
  CreateBusinessEntityDocument,
  CreateCallFlowDocument,
  CreateCarrierConnectionDocument,
  CreateContactDocument,
  CreateExecutionDocument,
  CreateKnowledgeBaseDocument,
  CreatePhoneNumberDocument,
  CreateProgramDocument,
  CreateTeamDocument,
  CreateWebhookDeliveryDocument,
  CreateWebhookEndpointDocument,
  CreditLedgerDocument,
  DeleteAgentDocument,
  DeleteAudienceDocument,
  DeleteBusinessEntityDocument,
  DeleteCallFlowDocument,
  DeleteCarrierConnectionDocument,
  DeleteContactDocument,
  DeleteKnowledgeBaseDocument,
  DeletePhoneNumberDocument,
  DeleteProgramDocument,
  DeleteTeamDocument,
  DeleteWebhookEndpointDocument,
  ImportContactsDocument,
  MeDocument,
  OrganizationDocument,
  RemoveAudienceMembersDocument,
  RemoveTeamMemberDocument,
  RemoveUserDocument,
  RotateWebhookEndpointSecretDocument,
  SendMessageDocument,
  StartConversationDocument,
  SyncProgramTriggersDocument,
  TeamDocument,
  TeamsDocument,
  TestAgentDocument,
  TestWebhookEndpointDocument,
  UpdateAgentDocument,
  UpdateAudienceDocument,
  UpdateBusinessEntityDocument,
  UpdateCallFlowDocument,
  UpdateCarrierConnectionDocument,
  UpdateContactDocument,
  UpdateOrganizationDocument,
  UpdatePhoneNumberDocument,
  UpdateProgramDocument,
  UpdateTeamDocument,
  UpdateUserRoleDocument,
  UpdateWebhookEndpointDocument,
  UsersDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, recordStatements, type TestUser } from '../helpers/users.js';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ALL_DAY, buildCampaign } from '../campaigns/fixtures.js';
import { PERMISSIONS } from '../../src/modules/organizations/roles.js';
import { withCursors } from '../helpers/pages.js';

// Organizations: the organization, users, teams, business entities, isolation and permissions, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('organization', () => {
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
  const balanceOf = async (organizationId: string) =>
    (await app.sql<{ credit_balance: number }>('select credit_balance from organizations where id = ?', [organizationId]))[0]!.credit_balance;

  describe('the organization', () => {
    it('is the caller’s own, the same on both doors, for any role', async () => {
      const rest = await acme.rest.get('/api/organization');
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual({
        id: acme.organizationId,
        name: 'Acme',
        creditBalance: 0,
        creditsReserved: 0,
        recordingRetentionDays: null,
        webCallOrigins: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const { organization } = await member.graphql.ok(OrganizationDocument);
      expect(organization).toEqual(rest.body);
      const other = await app.organization('Other');
      expect((await other.rest.get('/api/organization')).body).toMatchObject({ id: other.organizationId, name: 'Other' });
    });

    it('is renamed by an owner on both doors; updatedAt moves', async () => {
      const before = (await acme.rest.get('/api/organization')).body;
      const rest = await acme.rest.put('/api/organization', { name: 'Acme Corp' });
      expect(rest.status).toBe(200);
      expect(rest.body.name).toBe('Acme Corp');
      expect(Date.parse(rest.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
      const { updateOrganization } = await acme.graphql.ok(UpdateOrganizationDocument, { input: { name: 'Acme' } });
      // An admin may not: the organization is the owner's (see the permissions describe).
      expect((await admin.rest.put('/api/organization', { name: 'Admin Corp' })).status).toBe(403);
      expect(updateOrganization.name).toBe('Acme');
      expect((await acme.rest.get('/api/organization')).body.name).toBe('Acme');
    });

    it('a member gets 403 FORBIDDEN renaming it or adding credits, on both doors, and nothing changes', async () => {
      const rename = await member.rest.put('/api/organization', { name: 'Hijacked' });
      expect(rename.status).toBe(403);
      expect(rename.body.code).toBe('FORBIDDEN');
      const credits = await member.rest.post('/api/organization/credits', { amount: 10 });
      expect(credits.status).toBe(403);
      expect(credits.body.code).toBe('FORBIDDEN');
      const gqlRename = await member.graphql.run(UpdateOrganizationDocument, { input: { name: 'Hijacked' } });
      expect(gqlRename.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      const gqlCredits = await member.graphql.run(AddCreditsDocument, { amount: 10 });
      expect(gqlCredits.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      expect((await acme.rest.get('/api/organization')).body).toMatchObject({ name: 'Acme', creditBalance: 0 });
    });

    it.each([
      ['an empty name', { name: '' }],
      ['a name of 256 characters', { name: 'n'.repeat(256) }],
    ])('%s → 400 naming name on both doors', async (_label, input) => {
      const rest = await acme.rest.put('/api/organization', input);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(rest.body.errors)).toEqual(['name']);
      const gql = await acme.graphql.run(UpdateOrganizationDocument, { input });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['name']);
    });
  });

  const grant = (organizationId: string, amount: number, reason?: string) =>
    RequestContext.create(app.db.database.orm.em, () => app.gateway.services.credits.grant({ organizationId, amount, reason }));
  const ledgerRows = (organizationId: string) =>
    app.sql<{ kind: string; amount: number; balance_after: number; reason: string | null }>(
      'select kind, amount, balance_after, reason from credit_ledger where organization_id = ? order by created_at, id',
      [organizationId],
    );

  describe('credits', () => {
    it('the old top-up answers 403 FORBIDDEN naming the CLI, to an owner too, on both doors; nothing is granted', async () => {
      const org = await app.organization('Self-service');
      const rest = await org.rest.post('/api/organization/credits', { amount: 1_000_000 });
      expect([rest.status, rest.body.code]).toEqual([403, 'FORBIDDEN']);
      expect(rest.body.detail).toContain('npm run cli -- credits:add');
      const gql = await org.graphql.run(AddCreditsDocument, { amount: 1_000_000 });
      expect(gql.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      expect(gql.errors?.[0]?.message).toContain('npm run cli -- credits:add');
      expect(await balanceOf(org.organizationId)).toBe(0);
      expect(await ledgerRows(org.organizationId)).toEqual([]);
    });

    it('the operator grants them (the CLI’s service): balance and ledger row together', async () => {
      const org = await app.organization('Granted');
      expect(await grant(org.organizationId, 250, 'invoice 42')).toEqual({
        organizationId: org.organizationId,
        amount: 250,
        creditBalance: 250,
        ledgerEntryId: expect.any(String),
      });
      expect(await org.grantCredits(1_000_000)).toBe(1_000_250);
      expect(await balanceOf(org.organizationId)).toBe(1_000_250);
      expect(await ledgerRows(org.organizationId)).toEqual([
        { kind: 'grant', amount: 250, balance_after: 250, reason: 'invoice 42' },
        { kind: 'grant', amount: 1_000_000, balance_after: 1_000_250, reason: null },
      ]);
    });

    it.each([0, -5, 1.5, 1_000_000_001])('a grant of %d → BAD_USER_INPUT, nothing written', async (amount) => {
      const org = await app.organization('Bad grant');
      await expect(grant(org.organizationId, amount)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(await ledgerRows(org.organizationId)).toEqual([]);
    });

    it('a grant to an unknown organization → NOT_FOUND', async () => {
      await expect(grant('00000000-0000-4000-8000-000000000000', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(grant('nope', 5)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('a grant past the integer column → 409 CONFLICT, the balance and the ledger unchanged', async () => {
      const org = await app.organization('Full');
      await app.sql('update organizations set credit_balance = ? where id = ?', [2_147_000_000, org.organizationId]);
      await expect(grant(org.organizationId, 1_000_000)).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await balanceOf(org.organizationId)).toBe(2_147_000_000);
      expect(await ledgerRows(org.organizationId)).toEqual([]);
    });
  });

  describe('the credit ledger', () => {
    it('is read by any role, paged newest first, filtered by kind, the same on both doors, and only the caller’s', async () => {
      const org = await app.organization('Ledger');
      const reader = await addUser(app, org, 'member');
      for (const amount of [1, 2, 3]) await org.grantCredits(amount);
      await app.organization('Other ledger').then((other) => other.grantCredits(99));
      const rest = await reader.rest.get('/api/organization/credit-ledger?limit=2');
      expect(rest.status).toBe(200);
      expect(rest.body.data.map((entry: { amount: number }) => entry.amount)).toEqual([3, 2]);
      expect(rest.body.data[0]).toEqual({
        id: expect.any(String),
        kind: 'grant',
        amount: 3,
        balanceAfter: 6,
        reason: null,
        executionId: null,
        createdAt: expect.any(String),
      });
      expect(rest.body.meta).toEqual(withCursors({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
      const { creditLedger } = await reader.graphql.ok(CreditLedgerDocument, { limit: 2 });
      expect(creditLedger).toEqual(rest.body);
      expect((await reader.rest.get('/api/organization/credit-ledger?kind=spend')).body.meta.total).toBe(0);
      expect((await reader.graphql.ok(CreditLedgerDocument, { kind: 'grant' as never })).creditLedger.meta.total).toBe(3);
    });

    it.each([
      ['limit=0', { limit: 0 }, 'limit'],
      ['page=0', { page: 0 }, 'page'],
    ])('%s → 400 naming the field on both doors', async (query, variables, field) => {
      const rest = await acme.rest.get(`/api/organization/credit-ledger?${query}`);
      expect([rest.status, fieldsOf(rest.body.errors)]).toEqual([400, [field]]);
      const gql = await acme.graphql.run(CreditLedgerDocument, variables);
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
    });

    it('an unknown kind → 400 on REST', async () => {
      const rest = await acme.rest.get('/api/organization/credit-ledger?kind=gift');
      expect([rest.status, fieldsOf(rest.body.errors)]).toEqual([400, ['kind']]);
    });
  });
});

describe('users', () => {
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
      expect(res.body.user).toEqual({
        id: expect.any(String),
        email: 'ann@example.test',
        name: 'Ann',
        role: 'member',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(res.body.apiKey).toMatchObject({
        id: expect.any(String),
        keyPrefix: 'tag_',
        isActive: true,
        expiresAt: null,
        secret: expect.stringMatching(/^tag_[A-Za-z0-9]{40}$/),
      });
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
});

describe('teams', () => {
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
      expect(teams.meta).toEqual(withCursors({ page: 1, limit: 20, total: 2, totalPages: 1, hasNextPage: false, hasPreviousPage: false }));
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
      expect(added.body.members).toEqual([
        {
          role: 'member',
          user: { id: member.userId, email: member.email, name: expect.any(String), createdAt: expect.any(String), updatedAt: expect.any(String) },
        },
      ]);
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
});

describe('business-entities', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let contactId: string;
  let secondContactId: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    contactId = (await acme.rest.post('/api/contacts', { name: 'Ada', phone: '+14155550100' })).body.id;
    secondContactId = (await acme.rest.post('/api/contacts', { name: 'Bob', phone: '+14155550101' })).body.id;
  });
  afterAll(() => app.close());

  const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

  describe('a business entity', () => {
    it('is created, read, updated and deleted on both doors, the same shape on each', async () => {
      const input = { contactId, type: 'appointment', name: 'Dental check-up', attributes: { startsAt: '2026-05-01T09:00:00Z', room: 3 } };
      const rest = await acme.rest.post('/api/business-entities', input);
      expect(rest.status).toBe(201);
      expect(rest.body).toEqual({
        id: expect.any(String),
        organizationId: acme.organizationId,
        ...input,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const { businessEntity } = await acme.graphql.ok(BusinessEntityDocument, { id: rest.body.id });
      expect(businessEntity).toEqual(rest.body);

      const { createBusinessEntity } = await acme.graphql.ok(CreateBusinessEntityDocument, { input: { contactId, type: 'invoice', name: 'INV-1' } });
      expect(createBusinessEntity).toMatchObject({ contactId, type: 'invoice', name: 'INV-1', attributes: {} });

      const updated = await acme.rest.put(`/api/business-entities/${rest.body.id}`, { name: 'Cleaning' });
      expect(updated.body).toMatchObject({ name: 'Cleaning', type: 'appointment', attributes: input.attributes });
      const { updateBusinessEntity } = await acme.graphql.ok(UpdateBusinessEntityDocument, {
        id: createBusinessEntity.id,
        input: { contactId: secondContactId, attributes: { dueOn: '2026-06-30' } },
      });
      expect(updateBusinessEntity).toMatchObject({ contactId: secondContactId, name: 'INV-1', attributes: { dueOn: '2026-06-30' } });

      expect((await acme.rest.delete(`/api/business-entities/${rest.body.id}`)).status).toBe(204);
      expect((await acme.rest.get(`/api/business-entities/${rest.body.id}`)).status).toBe(404);
      const { deleteBusinessEntity } = await acme.graphql.ok(DeleteBusinessEntityDocument, { id: createBusinessEntity.id });
      expect(deleteBusinessEntity.id).toBe(createBusinessEntity.id);
      const gone = await acme.graphql.run(BusinessEntityDocument, { id: createBusinessEntity.id });
      expect(gone.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });

    it('goes away with its contact', async () => {
      const { body: contact } = await acme.rest.post('/api/contacts', { phone: '+14155550177' });
      const { body: entity } = await acme.rest.post('/api/business-entities', { contactId: contact.id, type: 'invoice', name: 'INV-9' });
      await acme.rest.delete(`/api/contacts/${contact.id}`);
      expect((await acme.rest.get(`/api/business-entities/${entity.id}`)).status).toBe(404);
    });

    const bad: [string, Record<string, unknown>, string][] = [
      ['an empty type', { contactId: '', type: '', name: 'x' }, 'type'],
      ['a type of 65 characters', { type: 't'.repeat(65), name: 'x' }, 'type'],
      ['an empty name', { type: 'invoice', name: '' }, 'name'],
      ['a name of 256 characters', { type: 'invoice', name: 'n'.repeat(256) }, 'name'],
      ['attributes that are not an object', { type: 'invoice', name: 'x', attributes: null }, 'attributes'],
    ];

    it.each(bad)('%s → 400 naming the field on both doors', async (_label, input, field) => {
      const body = { contactId, ...input };
      const rest = await acme.rest.post('/api/business-entities', body);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(rest.body.errors)).toEqual([field]);
      const gql = await acme.graphql.run(CreateBusinessEntityDocument, { input: body as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
    });

    it('a missing contact id → 404 NOT_FOUND on both doors, nothing written', async () => {
      for (const missing of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        const rest = await acme.rest.post('/api/business-entities', { contactId: missing, type: 'invoice', name: 'x' });
        expect(rest.status).toBe(404);
        const gql = await acme.graphql.run(CreateBusinessEntityDocument, { input: { contactId: missing, type: 'invoice', name: 'x' } });
        expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      const rows = await app.sql<{ n: number }>("select count(*)::int as n from business_entities where name = 'x'");
      expect(rows[0]!.n).toBe(0);
    });
  });

  describe('the entity list', () => {
    let org: TestOrganization;
    let first: string;
    let second: string;

    beforeAll(async () => {
      org = await app.organization('Lists');
      first = (await org.rest.post('/api/contacts', { phone: '+33612345670' })).body.id;
      second = (await org.rest.post('/api/contacts', { phone: '+33612345671' })).body.id;
      for (const [contact, type, name] of [
        [first, 'appointment', 'Alpha visit'],
        [first, 'invoice', 'Bravo bill'],
        [second, 'appointment', 'Charlie visit'],
        [second, 'appointment', 'Delta 100%'],
      ] as const) {
        await org.rest.post('/api/business-entities', { contactId: contact, type, name });
      }
    });

    it('pages, filters by contact and type, searches and sorts the same on both doors', async () => {
      const rest = await org.rest.get(`/api/business-entities?contactId=${second}&type=appointment&sortBy=name&sortOrder=asc&limit=1`);
      expect(rest.status).toBe(200);
      expect(rest.body.data.map((e: { name: string }) => e.name)).toEqual(['Charlie visit']);
      expect(rest.body.meta).toEqual(withCursors({ page: 1, limit: 1, total: 2, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
      const { businessEntities } = await org.graphql.ok(BusinessEntitiesDocument, {
        contactId: second,
        type: 'appointment',
        sortBy: 'name',
        sortOrder: 'asc',
        limit: 1,
      });
      expect(businessEntities).toEqual(rest.body);

      const types = await org.rest.get('/api/business-entities?type=appointment&sortBy=name&sortOrder=desc');
      expect(types.body.data.map((e: { name: string }) => e.name)).toEqual(['Delta 100%', 'Charlie visit', 'Alpha visit']);
      const search = await org.rest.get(`/api/business-entities?search=${encodeURIComponent('100%')}`);
      expect(search.body.data.map((e: { name: string }) => e.name)).toEqual(['Delta 100%']);
      const { businessEntities: invoices } = await org.graphql.ok(BusinessEntitiesDocument, { search: 'INVOICE' });
      expect(invoices.data.map((e) => e.name)).toEqual(['Bravo bill']);
    });

    it('a sortBy not in the allow-list or a bad limit → 400 naming it on both doors', async () => {
      for (const [query, variables, field] of [
        ['sortBy=attributes', { sortBy: 'attributes' }, 'sortBy'],
        ['limit=101', { limit: 101 }, 'limit'],
      ] as const) {
        const rest = await org.rest.get(`/api/business-entities?${query}`);
        expect(rest.status).toBe(400);
        expect(fieldsOf(rest.body.errors)).toEqual([field]);
        const gql = await org.graphql.run(BusinessEntitiesDocument, variables);
        expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
        expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual([field]);
      }
    });

    it('Contact.entities lists each contact’s records, filtered by type, in one statement for all contacts', async () => {
      const statements = await recordStatements(app, async () => {
        const { contacts } = await org.graphql.ok(ContactsWithEntitiesDocument, {});
        expect(contacts.data.map((contact) => [contact.id, contact.entities.map((e) => e.name)])).toEqual([
          [first, ['Alpha visit', 'Bravo bill']],
          [second, ['Charlie visit', 'Delta 100%']],
        ]);
      });
      expect(statements.filter((sql) => /from "business_entities"/.test(sql))).toHaveLength(1);
      const { contacts } = await org.graphql.ok(ContactsWithEntitiesDocument, { type: 'invoice' });
      expect(contacts.data.map((contact) => contact.entities.map((e) => e.name))).toEqual([['Bravo bill'], []]);
      // The REST contact keeps its own shape; records are listed at /api/entities.
      expect((await org.rest.get(`/api/contacts/${first}`)).body).not.toHaveProperty('entities');
    });
  });
});

describe('isolation', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let teamId: string;
  let contactId: string;
  let entityId: string;
  let otherTeamId: string;
  let otherContactId: string;
  let otherEntityId: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    teamId = (await acme.rest.post('/api/teams', { name: 'Acme secret team' })).body.id;
    await acme.rest.post(`/api/teams/${teamId}/members`, { userId: acme.userId });
    contactId = (await acme.rest.post('/api/contacts', { phone: '+14155550100' })).body.id;
    entityId = (await acme.rest.post('/api/business-entities', { contactId, type: 'invoice', name: 'Acme secret invoice' })).body.id;
    otherTeamId = (await other.rest.post('/api/teams', { name: 'Other team' })).body.id;
    otherContactId = (await other.rest.post('/api/contacts', { phone: '+14155550101' })).body.id;
    otherEntityId = (await other.rest.post('/api/business-entities', { contactId: otherContactId, type: 'invoice', name: 'Other invoice' })).body.id;
  });
  afterAll(() => app.close());

  describe('another organization', () => {
    it('gets 404 NOT_FOUND on every team and entity id route over REST', async () => {
      const responses = [
        await other.rest.get(`/api/teams/${teamId}`),
        await other.rest.put(`/api/teams/${teamId}`, { name: 'stolen' }),
        await other.rest.post(`/api/teams/${teamId}/members`, { userId: other.userId }),
        await other.rest.delete(`/api/teams/${teamId}/members/${acme.userId}`),
        await other.rest.delete(`/api/teams/${teamId}`),
        await other.rest.post(`/api/teams/${otherTeamId}/members`, { userId: acme.userId }),
        await other.rest.get(`/api/business-entities/${entityId}`),
        await other.rest.put(`/api/business-entities/${entityId}`, { name: 'stolen' }),
        await other.rest.delete(`/api/business-entities/${entityId}`),
        await other.rest.post('/api/business-entities', { contactId, type: 'invoice', name: 'planted' }),
        await other.rest.put(`/api/business-entities/${otherEntityId}`, { contactId }),
        await other.rest.get(`/api/business-entities?contactId=${contactId}`),
      ];
      for (const res of responses) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
      expect((await acme.rest.get(`/api/teams/${teamId}`)).body).toMatchObject({ name: 'Acme secret team', members: [{ user: { id: acme.userId } }] });
      expect((await acme.rest.get(`/api/business-entities/${entityId}`)).body).toMatchObject({ name: 'Acme secret invoice', contactId });
      expect((await other.rest.get(`/api/business-entities/${otherEntityId}`)).body.contactId).toBe(otherContactId);
    });

    it('gets NOT_FOUND on every operation over GraphQL', async () => {
      const runs = [
        await other.graphql.run(TeamDocument, { id: teamId }),
        await other.graphql.run(UpdateTeamDocument, { id: teamId, input: { name: 'stolen' } }),
        await other.graphql.run(AddTeamMemberDocument, { teamId, userId: other.userId }),
        await other.graphql.run(RemoveTeamMemberDocument, { teamId, userId: acme.userId }),
        await other.graphql.run(DeleteTeamDocument, { id: teamId }),
        await other.graphql.run(AddTeamMemberDocument, { teamId: otherTeamId, userId: acme.userId }),
        await other.graphql.run(BusinessEntityDocument, { id: entityId }),
        await other.graphql.run(UpdateBusinessEntityDocument, { id: entityId, input: { name: 'stolen' } }),
        await other.graphql.run(DeleteBusinessEntityDocument, { id: entityId }),
        await other.graphql.run(CreateBusinessEntityDocument, { input: { contactId, type: 'invoice', name: 'planted' } }),
        await other.graphql.run(UpdateBusinessEntityDocument, { id: otherEntityId, input: { contactId } }),
        await other.graphql.run(BusinessEntitiesDocument, { contactId }),
      ];
      for (const run of runs) expect(run.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      const rows = await app.sql<{ n: number }>("select count(*)::int as n from business_entities where name in ('planted', 'stolen')");
      expect(rows[0]!.n).toBe(0);
      expect((await other.rest.get(`/api/teams/${otherTeamId}`)).body.members).toEqual([]);
    });

    it('never sees the first organization in its lists or as its organization, on either door', async () => {
      expect((await other.rest.get('/api/teams')).body.data.map((team: { id: string }) => team.id)).toEqual([otherTeamId]);
      const { teams } = await other.graphql.ok(TeamsDocument);
      expect(teams.data.map((team) => team.id)).toEqual([otherTeamId]);
      const entities = await other.rest.get('/api/business-entities?search=secret');
      expect(entities.body.meta.total).toBe(0);
      const { businessEntities } = await other.graphql.ok(BusinessEntitiesDocument, {});
      expect(businessEntities.data.map((entity) => entity.id)).toEqual([otherEntityId]);
      const { organization } = await other.graphql.ok(OrganizationDocument);
      expect(organization.id).toBe(other.organizationId);
    });

    it('a malformed id is 404 too, not a database error', async () => {
      expect((await acme.rest.get('/api/teams/not-a-uuid')).status).toBe(404);
      expect((await acme.rest.get('/api/business-entities/not-a-uuid')).status).toBe(404);
      expect((await acme.rest.get('/api/business-entities?contactId=not-a-uuid')).status).toBe(404);
      const gql = await acme.graphql.run(TeamDocument, { id: 'not-a-uuid' });
      expect(gql.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });
});

describe('permissions', () => {
  // Every write a role may not do is tried on both doors with a valid body, answers 403 FORBIDDEN,
  // and leaves every table as it was (compared by a digest of the rows, lastUsedAt of keys aside).

  let app: TestApp;
  let acme: TestOrganization;
  let member: TestUser;
  let admin: TestUser;
  let ids: Record<string, string>;

  const TABLES = [
    'organizations',
    'users',
    'teams',
    'team_memberships',
    'agents',
    'conversations',
    'messages',
    'knowledge_bases',
    'knowledge_documents',
    'knowledge_chunks',
    'contacts',
    'business_entities',
    'audiences',
    'audience_members',
    'call_flows',
    'programs',
    'executions',
    'execution_contacts',
    'contact_triggers',
    'carrier_connections',
    'phone_numbers',
    'calls',
    'webhook_endpoints',
    'webhook_deliveries',
    'do_not_call_entries',
    'call_recordings',
    'tools',
    'mcp_servers',
    'tool_calls',
  ];
  const connectionBody = { name: 'Twilio', accountSid: `AC${'1'.repeat(32)}`, authToken: 'f'.repeat(32) };

  async function digest(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const table of TABLES) {
      const [row] = await app.sql<{ d: string | null }>(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as d from ${table} t`);
      out[table] = row!.d ?? '';
    }
    const [keys] = await app.sql<{ d: string }>(
      `select md5(coalesce(string_agg(concat_ws(',', id, name, is_active, expires_at, updated_at), '|' order by id), '')) as d from api_keys`,
    );
    out.api_keys = keys!.d;
    return out;
  }

  const agentBody = { name: 'Intruder', instructions: 'x', modelConfig: { model: 'builtin/echo' } };
  const toolBody = { name: 'intruder', description: 'x', parameters: { type: 'object' }, url: 'https://93.184.215.14/tool' };
  const flowBody = (agentId: string) => ({
    name: 'Intruder flow',
    nodes: [
      { id: 'start', type: 'start', agentId },
      { id: 'end', type: 'end' },
    ],
    edges: [{ from: 'start', to: 'end', condition: 'answered' }],
  });

  interface Case {
    name: string;
    permission: keyof typeof PERMISSIONS;
    rest: () => [method: 'post' | 'put' | 'delete', path: string, body?: unknown];
    graphql: () => [TypedDocumentNode<any, any>, Record<string, unknown>];
  }

  const CASES: Case[] = [
    {
      name: 'create an agent',
      permission: 'agents.manage',
      rest: () => ['post', '/api/agents', agentBody],
      graphql: () => [CreateAgentDocument, { input: agentBody }],
    },
    {
      name: 'change an agent’s policy',
      permission: 'agents.manage',
      rest: () => ['put', `/api/agents/${ids.agent}`, { policy: 'Refund everything.' }],
      graphql: () => [UpdateAgentDocument, { id: ids.agent, input: { policy: 'Refund everything.' } }],
    },
    {
      name: 'activate an agent',
      permission: 'agents.manage',
      rest: () => ['post', `/api/agents/${ids.draftAgent}/activate`],
      graphql: () => [ActivateAgentDocument, { id: ids.draftAgent }],
    },
    {
      name: 'delete an agent',
      permission: 'agents.manage',
      rest: () => ['delete', `/api/agents/${ids.agent}`],
      graphql: () => [DeleteAgentDocument, { id: ids.agent }],
    },
    {
      name: 'create a knowledge base',
      permission: 'knowledge.manage',
      rest: () => ['post', '/api/knowledge-bases', { name: 'KB' }],
      graphql: () => [CreateKnowledgeBaseDocument, { input: { name: 'KB' } }],
    },
    {
      name: 'add a document',
      permission: 'knowledge.manage',
      rest: () => ['post', `/api/knowledge-bases/${ids.kb}/documents`, { title: 'T', content: 'C' }],
      graphql: () => [AddDocumentDocument, { knowledgeBaseId: ids.kb, input: { title: 'T', content: 'C' } }],
    },
    {
      name: 'delete a knowledge base',
      permission: 'knowledge.manage',
      rest: () => ['delete', `/api/knowledge-bases/${ids.kb}`],
      graphql: () => [DeleteKnowledgeBaseDocument, { id: ids.kb }],
    },
    {
      name: 'create a contact',
      permission: 'contacts.manage',
      rest: () => ['post', '/api/contacts', { phone: '+12025550999' }],
      graphql: () => [CreateContactDocument, { input: { phone: '+12025550999' } }],
    },
    {
      name: 'change a contact',
      permission: 'contacts.manage',
      rest: () => ['put', `/api/contacts/${ids.contact}`, { name: 'X' }],
      graphql: () => [UpdateContactDocument, { id: ids.contact, input: { name: 'X' } }],
    },
    {
      name: 'delete a contact',
      permission: 'contacts.manage',
      rest: () => ['delete', `/api/contacts/${ids.contact}`],
      graphql: () => [DeleteContactDocument, { id: ids.contact }],
    },
    {
      name: 'import contacts',
      permission: 'contacts.manage',
      rest: () => ['post', '/api/contacts/import', { contacts: [{ phone: '+12025550998' }] }],
      graphql: () => [ImportContactsDocument, { input: { contacts: [{ phone: '+12025550998' }] } }],
    },
    {
      name: 'put a number on the do-not-call list',
      permission: 'contacts.manage',
      rest: () => ['post', '/api/do-not-call', { phone: '+12025550996' }],
      graphql: () => [AddDoNotCallDocument, { input: { phone: '+12025550996' } }],
    },
    {
      name: 'take a number off the do-not-call list',
      permission: 'contacts.manage',
      rest: () => ['delete', '/api/do-not-call/+12025550995'],
      graphql: () => [RemoveDoNotCallDocument, { id: '+12025550995' }],
    },
    {
      name: 'import numbers to the do-not-call list',
      permission: 'contacts.manage',
      rest: () => ['post', '/api/do-not-call/import', { csv: '+12025550994' }],
      graphql: () => [ImportDoNotCallDocument, { input: { csv: '+12025550994' } }],
    },
    {
      name: 'create a business record',
      permission: 'contacts.manage',
      rest: () => ['post', '/api/business-entities', { contactId: ids.contact, type: 'order', name: 'O' }],
      graphql: () => [CreateBusinessEntityDocument, { input: { contactId: ids.contact, type: 'order', name: 'O' } }],
    },
    {
      name: 'change a business record',
      permission: 'contacts.manage',
      rest: () => ['put', `/api/business-entities/${ids.entity}`, { name: 'P' }],
      graphql: () => [UpdateBusinessEntityDocument, { id: ids.entity, input: { name: 'P' } }],
    },
    {
      name: 'delete a business record',
      permission: 'contacts.manage',
      rest: () => ['delete', `/api/business-entities/${ids.entity}`],
      graphql: () => [DeleteBusinessEntityDocument, { id: ids.entity }],
    },
    {
      name: 'create an audience',
      permission: 'audiences.manage',
      rest: () => ['post', '/api/audience', { name: 'A' }],
      graphql: () => [CreateAudienceDocument, { input: { name: 'A' } }],
    },
    {
      name: 'change an audience',
      permission: 'audiences.manage',
      rest: () => ['put', `/api/audience/${ids.audience}`, { name: 'B' }],
      graphql: () => [UpdateAudienceDocument, { id: ids.audience, input: { name: 'B' } }],
    },
    {
      name: 'delete an audience',
      permission: 'audiences.manage',
      rest: () => ['delete', `/api/audience/${ids.audience}`],
      graphql: () => [DeleteAudienceDocument, { id: ids.audience }],
    },
    {
      name: 'add audience members',
      permission: 'audiences.manage',
      rest: () => ['post', `/api/audience/${ids.audience}/members`, { contactIds: [ids.loneContact] }],
      graphql: () => [AddAudienceMembersDocument, { audienceId: ids.audience, contactIds: [ids.loneContact] }],
    },
    {
      name: 'remove audience members',
      permission: 'audiences.manage',
      rest: () => ['delete', `/api/audience/${ids.audience}/members`, { contactIds: [ids.contact] }],
      graphql: () => [RemoveAudienceMembersDocument, { audienceId: ids.audience, contactIds: [ids.contact] }],
    },
    {
      name: 'create a call flow',
      permission: 'flows.manage',
      rest: () => ['post', '/api/call-flows', flowBody(ids.agent!)],
      graphql: () => [CreateCallFlowDocument, { input: flowBody(ids.agent!) }],
    },
    {
      name: 'change a call flow',
      permission: 'flows.manage',
      rest: () => ['put', `/api/call-flows/${ids.flow}`, { name: 'Renamed' }],
      graphql: () => [UpdateCallFlowDocument, { id: ids.flow, input: { name: 'Renamed' } }],
    },
    {
      name: 'delete a call flow',
      permission: 'flows.manage',
      rest: () => ['delete', `/api/call-flows/${ids.flow}`],
      graphql: () => [DeleteCallFlowDocument, { id: ids.flow }],
    },
    {
      name: 'create a program',
      permission: 'programs.manage',
      rest: () => ['post', '/api/programs', { name: 'P', kind: 'campaign', audienceId: ids.audience, callingWindow: ALL_DAY }],
      graphql: () => [CreateProgramDocument, { input: { name: 'P', kind: 'campaign', audienceId: ids.audience, callingWindow: ALL_DAY } }],
    },
    {
      name: 'change a program',
      permission: 'programs.manage',
      rest: () => ['put', `/api/programs/${ids.program}`, { name: 'Q' }],
      graphql: () => [UpdateProgramDocument, { id: ids.program, input: { name: 'Q' } }],
    },
    {
      name: 'activate a program',
      permission: 'programs.manage',
      rest: () => ['post', `/api/programs/${ids.draftProgram}/activate`],
      graphql: () => [ActivateProgramDocument, { id: ids.draftProgram }],
    },
    {
      name: 'delete a program',
      permission: 'programs.manage',
      rest: () => ['delete', `/api/programs/${ids.program}`],
      graphql: () => [DeleteProgramDocument, { id: ids.program }],
    },
    {
      name: 'sync a program’s triggers',
      permission: 'programs.manage',
      rest: () => ['post', `/api/programs/${ids.program}/triggers/sync`],
      graphql: () => [SyncProgramTriggersDocument, { programId: ids.program }],
    },
    {
      name: 'start an execution (spends credits)',
      permission: 'executions.control',
      rest: () => ['post', `/api/programs/${ids.program}/executions`, {}],
      graphql: () => [CreateExecutionDocument, { programId: ids.program }],
    },
    {
      name: 'cancel an execution',
      permission: 'executions.control',
      rest: () => ['post', `/api/executions/${ids.execution}/cancel`],
      graphql: () => [ControlExecutionDocument, { id: ids.execution, action: 'cancel' as const }],
    },
    {
      name: 'connect a carrier',
      permission: 'telephony.manage',
      rest: () => ['post', '/api/carrier-connections', connectionBody],
      graphql: () => [CreateCarrierConnectionDocument, { input: connectionBody }],
    },
    {
      name: 'change a carrier connection',
      permission: 'telephony.manage',
      rest: () => ['put', `/api/carrier-connections/${ids.connection}`, { callsPerSecond: 50 }],
      graphql: () => [UpdateCarrierConnectionDocument, { id: ids.connection, input: { callsPerSecond: 50 } }],
    },
    {
      name: 'delete a carrier connection',
      permission: 'telephony.manage',
      rest: () => ['delete', `/api/carrier-connections/${ids.connection}`],
      graphql: () => [DeleteCarrierConnectionDocument, { id: ids.connection }],
    },
    {
      name: 'add a phone number',
      permission: 'telephony.manage',
      rest: () => ['post', '/api/phone-numbers', { number: '+14155550111' }],
      graphql: () => [CreatePhoneNumberDocument, { input: { number: '+14155550111' } }],
    },
    {
      name: 'change a phone number',
      permission: 'telephony.manage',
      rest: () => ['put', `/api/phone-numbers/${ids.number}`, { label: 'Mine now' }],
      graphql: () => [UpdatePhoneNumberDocument, { id: ids.number, input: { label: 'Mine now' } }],
    },
    {
      name: 'delete a phone number',
      permission: 'telephony.manage',
      rest: () => ['delete', `/api/phone-numbers/${ids.number}`],
      graphql: () => [DeletePhoneNumberDocument, { id: ids.number }],
    },
    {
      name: 'add a webhook endpoint',
      permission: 'webhooks.manage',
      rest: () => ['post', '/api/webhook-endpoints', { url: 'https://93.184.215.14/hooks' }],
      graphql: () => [CreateWebhookEndpointDocument, { input: { url: 'https://93.184.215.14/hooks' } }],
    },
    {
      name: 'change a webhook endpoint',
      permission: 'webhooks.manage',
      rest: () => ['put', `/api/webhook-endpoints/${ids.endpoint}`, { url: 'https://93.184.215.15/mine' }],
      graphql: () => [UpdateWebhookEndpointDocument, { id: ids.endpoint!, input: { url: 'https://93.184.215.15/mine' } }],
    },
    {
      name: 'delete a webhook endpoint',
      permission: 'webhooks.manage',
      rest: () => ['delete', `/api/webhook-endpoints/${ids.endpoint}`],
      graphql: () => [DeleteWebhookEndpointDocument, { id: ids.endpoint! }],
    },
    {
      name: 'rotate a webhook secret',
      permission: 'webhooks.manage',
      rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/rotate-secret`],
      graphql: () => [RotateWebhookEndpointSecretDocument, { id: ids.endpoint! }],
    },
    {
      name: 're-send an event to a webhook endpoint',
      permission: 'webhooks.manage',
      rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/deliveries`, { eventId: ids.event }],
      graphql: () => [CreateWebhookDeliveryDocument, { endpointId: ids.endpoint!, input: { eventId: ids.event! } }],
    },
    {
      name: 'send a webhook test event',
      permission: 'webhooks.manage',
      rest: () => ['post', `/api/webhook-endpoints/${ids.endpoint}/test`],
      graphql: () => [TestWebhookEndpointDocument, { id: ids.endpoint! }],
    },
    {
      name: 'add an HTTP tool',
      permission: 'tools.manage',
      rest: () => ['post', '/api/tools', toolBody],
      graphql: () => [CreateToolDocument, { input: toolBody }],
    },
    {
      name: 'change an HTTP tool',
      permission: 'tools.manage',
      rest: () => ['put', `/api/tools/${ids.tool}`, { url: 'https://93.184.215.15/mine' }],
      graphql: () => [UpdateToolDocument, { id: ids.tool!, input: { url: 'https://93.184.215.15/mine' } }],
    },
    {
      name: 'rotate a tool’s secret',
      permission: 'tools.manage',
      rest: () => ['post', `/api/tools/${ids.tool}/rotate-secret`],
      graphql: () => [RotateToolSecretDocument, { id: ids.tool! }],
    },
    {
      name: 'delete an HTTP tool',
      permission: 'tools.manage',
      rest: () => ['delete', `/api/tools/${ids.tool}`],
      graphql: () => [DeleteToolDocument, { id: ids.tool! }],
    },
    {
      name: 'register an MCP server',
      permission: 'tools.manage',
      rest: () => ['post', '/api/mcp-servers', { name: 'Mine', url: 'https://93.184.215.14/mcp' }],
      graphql: () => [CreateMcpServerDocument, { input: { name: 'Mine', url: 'https://93.184.215.14/mcp' } }],
    },
    {
      name: 'change an MCP server',
      permission: 'tools.manage',
      rest: () => ['put', `/api/mcp-servers/${ids.mcpServer}`, { url: 'https://93.184.215.15/mcp' }],
      graphql: () => [UpdateMcpServerDocument, { id: ids.mcpServer!, input: { url: 'https://93.184.215.15/mcp' } }],
    },
    {
      name: 'refresh an MCP server’s tools',
      permission: 'tools.manage',
      rest: () => ['post', `/api/mcp-servers/${ids.mcpServer}/refresh`],
      graphql: () => [RefreshMcpServerDocument, { id: ids.mcpServer! }],
    },
    {
      name: 'delete an MCP server',
      permission: 'tools.manage',
      rest: () => ['delete', `/api/mcp-servers/${ids.mcpServer}`],
      graphql: () => [DeleteMcpServerDocument, { id: ids.mcpServer! }],
    },
    {
      name: 'create a team',
      permission: 'teams.manage',
      rest: () => ['post', '/api/teams', { name: 'T2' }],
      graphql: () => [CreateTeamDocument, { input: { name: 'T2' } }],
    },
    {
      name: 'rename a team',
      permission: 'teams.manage',
      rest: () => ['put', `/api/teams/${ids.team}`, { name: 'T3' }],
      graphql: () => [UpdateTeamDocument, { id: ids.team, input: { name: 'T3' } }],
    },
    {
      name: 'delete a team',
      permission: 'teams.manage',
      rest: () => ['delete', `/api/teams/${ids.team}`],
      graphql: () => [DeleteTeamDocument, { id: ids.team }],
    },
    {
      name: 'add a team member',
      permission: 'teams.manage',
      rest: () => ['post', `/api/teams/${ids.team}/members`, { userId: ids.member }],
      graphql: () => [AddTeamMemberDocument, { teamId: ids.team, userId: ids.member }],
    },
    {
      name: 'remove a team member',
      permission: 'teams.manage',
      rest: () => ['delete', `/api/teams/${ids.team}/members/${ids.owner}`],
      graphql: () => [RemoveTeamMemberDocument, { teamId: ids.team, userId: ids.owner }],
    },
    {
      name: 'delete a call recording',
      permission: 'recordings.manage',
      rest: () => ['delete', `/api/calls/${ids.call}/recording`],
      graphql: () => [DeleteCallRecordingDocument, { callId: ids.call! }],
    },
    {
      name: 'set how long call recordings are kept',
      permission: 'organization.manage',
      rest: () => ['put', '/api/organization', { recordingRetentionDays: 1 }],
      graphql: () => [UpdateOrganizationDocument, { input: { recordingRetentionDays: 1 } }],
    },
    {
      name: 'rename the organization',
      permission: 'organization.manage',
      rest: () => ['put', '/api/organization', { name: 'Hijacked' }],
      graphql: () => [UpdateOrganizationDocument, { input: { name: 'Hijacked' } }],
    },
    {
      name: 'add a user',
      permission: 'users.manage',
      rest: () => ['post', '/api/users', { email: 'mallory@example.test', role: 'owner' }],
      graphql: () => [AddUserDocument, { input: { email: 'mallory@example.test', role: 'owner' as const } }],
    },
    {
      name: 'change a user’s role',
      permission: 'users.manage',
      rest: () => ['put', `/api/users/${ids.member}`, { role: 'owner' }],
      graphql: () => [UpdateUserRoleDocument, { id: ids.member, role: 'owner' as const }],
    },
    {
      name: 'remove a user',
      permission: 'users.manage',
      rest: () => ['delete', `/api/users/${ids.owner}`],
      graphql: () => [RemoveUserDocument, { id: ids.owner }],
    },
  ];

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    member = await addUser(app, acme, 'member');
    admin = await addUser(app, acme, 'admin');
    const campaign = await buildCampaign(acme, 2);
    const post = async (path: string, body?: unknown) => {
      const res = await acme.rest.post(path, body);
      expect(res.status).toBeLessThan(300);
      return res.body.id as string;
    };
    const kb = await post('/api/knowledge-bases', { name: 'Help' });
    await post(`/api/knowledge-bases/${kb}/documents`, { title: 'Hours', content: 'We open at nine.' });
    const agent = await post('/api/agents', { ...agentBody, name: 'Front desk', policy: 'Never promise refunds.' });
    expect((await acme.rest.post(`/api/agents/${agent}/activate`)).status).toBe(200);
    const draftProgram = await post('/api/programs', {
      name: 'Draft',
      kind: 'campaign',
      flowId: campaign.flowId,
      audienceId: campaign.audienceId,
      callingWindow: ALL_DAY,
    });
    const team = await post('/api/teams', { name: 'Ops' });
    await post('/api/do-not-call', { phone: '+12025550995' });
    // A call with its recording, as the runner and the simulated carrier write them.
    const call = '5d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a';
    await app.sql(
      `insert into calls (id, created_at, updated_at, organization_id, direction, to_number, status, attempt, carrier, queued_at, reached_node_ids, credits_charged)
       values (?, now(), now(), ?, 'outbound', '+14155550199', 'completed', 1, 'simulator', now(), '[]'::jsonb, 0)`,
      [call, acme.organizationId],
    );
    await app.sql(
      `insert into call_recordings (id, created_at, updated_at, organization_id, call_id, carrier, carrier_recording_id, status, channels, duration_seconds, audio)
       values ('6e3d2c1b-0a9f-4e8d-9c7b-6a5f4e3d2c1b', now(), now(), ?, ?, 'simulator', 'SR00000000000000000000000000000001', 'completed', 'mono', 1, ?)`,
      [acme.organizationId, call, Buffer.from('RIFF')],
    );
    // A connection as it is stored (made through the door it is first checked with the carrier).
    const connection = '7b0c4a8e-2f65-4f1d-9a7e-5d3c2b1a0f9e';
    await app.sql(
      `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
       values (?, now(), now(), ?, 'Twilio', 'twilio', ?, 'v1:AAAA:AAAA:AAAA', 'ffff', 1)`,
      [connection, acme.organizationId, `AC${'2'.repeat(32)}`],
    );
    expect((await acme.rest.post(`/api/teams/${team}/members`, { userId: acme.userId })).status).toBe(200);
    // An endpoint as it is stored (the door needs CREDENTIALS_KEY to seal its secret).
    const endpoint = '3f1e2d4c-5b6a-4798-8a9b-0c1d2e3f4a5b';
    await app.sql(
      `insert into webhook_endpoints (id, created_at, updated_at, organization_id, url, event_types, enabled, secret_encrypted, secret_hint)
       values (?, now(), now(), ?, 'https://93.184.215.14/hooks', '[]'::jsonb, true, 'v1:AAAA:AAAA:AAAA', 'abcd')`,
      [endpoint, acme.organizationId],
    );
    // A tool and an MCP server as they are stored (the doors need CREDENTIALS_KEY, and the server a listing).
    const tool = '4a2f3e5d-6c7b-4a89-9bac-1d2e3f4a5b6c';
    await app.sql(
      `insert into tools (id, created_at, updated_at, organization_id, name, description, parameters, url, secret_encrypted, secret_hint)
       values (?, now(), now(), ?, 'lookup', 'Look up', '{"type":"object"}'::jsonb, 'https://93.184.215.14/tool', 'v1:AAAA:AAAA:AAAA', 'abcd')`,
      [tool, acme.organizationId],
    );
    const mcpServer = '5b3a4f6e-7d8c-4b9a-8cbd-2e3f4a5b6c7d';
    await app.sql(
      `insert into mcp_servers (id, created_at, updated_at, organization_id, name, url) values (?, now(), now(), ?, 'Shop', 'https://93.184.215.14/mcp')`,
      [mcpServer, acme.organizationId],
    );
    const [event] = (await acme.rest.get('/api/events?limit=1')).body.data;
    ids = {
      tool,
      mcpServer,
      call,
      endpoint,
      event: event.id,
      owner: acme.userId,
      member: member.userId,
      agent,
      draftAgent: await post('/api/agents', { ...agentBody, name: 'Draft' }),
      kb,
      contact: campaign.contacts[0]!.id,
      loneContact: await post('/api/contacts', { phone: '+12025550997' }),
      entity: await post('/api/business-entities', { contactId: campaign.contacts[0]!.id, type: 'order', name: 'Order 1' }),
      audience: campaign.audienceId,
      flow: campaign.flowId,
      program: campaign.programId,
      draftProgram,
      execution: await post(`/api/programs/${campaign.programId}/executions`, {}),
      team,
      connection,
      number: await post('/api/phone-numbers', { number: '+14155550110', carrierConnectionId: connection }),
    };
  });
  afterAll(() => app.close());

  describe.each([
    ['member', () => member],
    ['admin', () => admin],
  ] as const)('as an %s', (role, caller) => {
    const forbidden = CASES.filter((item) => !(PERMISSIONS[item.permission].roles as readonly string[]).includes(role));

    it.each(forbidden.map((item) => [item.name, item] as const))('%s → 403 FORBIDDEN on both doors, and nothing changes', async (_name, item) => {
      const before = await digest();
      const [method, path, body] = item.rest();
      const rest = await caller().rest.request(method.toUpperCase(), path, body);
      expect([rest.status, rest.body.code]).toEqual([403, 'FORBIDDEN']);
      const [document, variables] = item.graphql();
      const gql = await caller().graphql.run(document, variables);
      expect(gql.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      expect(gql.errors).toHaveLength(1);
      expect(await digest()).toEqual(before);
    });
  });

  describe('what a member may do', () => {
    it('reads everything and talks to agents on both doors', async () => {
      for (const path of [
        '/api/agents',
        '/api/contacts',
        '/api/audience',
        '/api/programs',
        '/api/call-flows',
        '/api/knowledge-bases',
        '/api/teams',
        '/api/users',
        '/api/organization',
        '/api/carrier-connections',
        '/api/phone-numbers',
        '/api/calls',
        '/api/do-not-call',
        '/api/webhook-endpoints',
        `/api/webhook-endpoints/${ids.endpoint}/deliveries`,
      ]) {
        expect([path, (await member.rest.get(path)).status]).toEqual([path, 200]);
      }
      expect((await member.rest.post(`/api/agents/${ids.agent}/test`, { message: 'hi' })).body.response).toBe('Echo: hi');
      expect((await member.graphql.ok(TestAgentDocument, { id: ids.agent!, message: 'hey' })).testAgent.response).toBe('Echo: hey');
      const conversation = await member.rest.post(`/api/agents/${ids.agent}/conversations`);
      expect(conversation.status).toBe(201);
      expect((await member.rest.post(`/api/conversations/${conversation.body.id}/messages`, { message: 'one' })).status).toBe(200);
      const { startConversation } = await member.graphql.ok(StartConversationDocument, { agentId: ids.agent! });
      expect((await member.graphql.ok(SendMessageDocument, { conversationId: startConversation.id, message: 'two' })).sendMessage.response).toBe('Echo: two');
    });

    it('an admin manages agents (policy included) on both doors', async () => {
      expect((await admin.rest.put(`/api/agents/${ids.draftAgent}`, { policy: 'Be kind.' })).body.hasPolicy).toBe(true);
      expect((await admin.graphql.ok(UpdateAgentDocument, { id: ids.draftAgent!, input: { name: 'Renamed' } })).updateAgent.name).toBe('Renamed');
    });

    it('a demoted user’s key and token lose the rights at once', async () => {
      const user = await addUser(app, acme, 'admin');
      const token = (await user.rest.post('/api/auth/token')).body.accessToken as string;
      const bearer = app.rest({ authorization: `Bearer ${token}` });
      expect((await bearer.post('/api/audience', { name: 'By admin' })).status).toBe(201);
      expect((await acme.rest.put(`/api/users/${user.userId}`, { role: 'member' })).status).toBe(200);
      expect((await bearer.post('/api/audience', { name: 'By member' })).status).toBe(403);
      expect((await user.rest.post('/api/audience', { name: 'By member' })).status).toBe(403);
    });
  });
});
