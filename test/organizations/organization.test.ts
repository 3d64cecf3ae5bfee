import { RequestContext } from '@mikro-orm/core';
import { AddCreditsDocument, CreditLedgerDocument, OrganizationDocument, UpdateOrganizationDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addUser, type TestUser } from '../helpers/users.js';

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
    expect(rest.body).toEqual({ id: acme.organizationId, name: 'Acme', creditBalance: 0, createdAt: expect.any(String), updatedAt: expect.any(String) });
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
    // An admin may not: the organization is the owner's (see test/organizations/permissions.test.ts).
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
    expect(await grant(org.organizationId, 250, 'invoice 42')).toEqual({ organizationId: org.organizationId, amount: 250, creditBalance: 250, ledgerEntryId: expect.any(String) });
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
    expect(rest.body.data[0]).toEqual({ id: expect.any(String), kind: 'grant', amount: 3, balanceAfter: 6, reason: null, executionId: null, createdAt: expect.any(String) });
    expect(rest.body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
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

describe('spendCredits', () => {
  const spend = (organizationId: string, amount: number) =>
    app.gateway.services.organizations.spendCredits(app.db.database.orm.em.fork() as never, organizationId, amount);

  it('takes credits while the balance covers them, and refuses (taking nothing) when it does not', async () => {
    const org = await app.organization('Spender');
    await org.grantCredits(10);
    expect(await spend(org.organizationId, 4)).toBe(true);
    expect(await spend(org.organizationId, 6)).toBe(true);
    expect(await spend(org.organizationId, 1)).toBe(false);
    expect(await balanceOf(org.organizationId)).toBe(0);
    expect((await org.rest.get('/api/organization')).body.creditBalance).toBe(0);
    expect((await ledgerRows(org.organizationId)).map((row) => [row.kind, row.amount, row.balance_after])).toEqual([
      ['grant', 10, 10],
      ['spend', -4, 6],
      ['spend', -6, 0],
    ]);
  });

  it('many concurrent spends never take the balance below zero', async () => {
    const org = await app.organization('Race');
    await org.grantCredits(100);
    const results = await Promise.all(Array.from({ length: 40 }, () => spend(org.organizationId, 7)));
    expect(results.filter(Boolean)).toHaveLength(14);
    expect(await balanceOf(org.organizationId)).toBe(2);
  });

  it('spends in the caller’s transaction, so a rollback gives the credits back', async () => {
    const org = await app.organization('Rollback');
    await org.grantCredits(5);
    await expect(
      app.db.database.orm.em.fork().transactional(async (em) => {
        expect(await app.gateway.services.organizations.spendCredits(em as never, org.organizationId, 5)).toBe(true);
        throw new Error('call failed');
      }),
    ).rejects.toThrow('call failed');
    expect(await balanceOf(org.organizationId)).toBe(5);
    expect((await ledgerRows(org.organizationId)).map((row) => row.kind)).toEqual(['grant']);
  });

  it('refuses an amount that is not a positive integer', async () => {
    await expect(spend(acme.organizationId, 0)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(spend(acme.organizationId, 1.5)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
