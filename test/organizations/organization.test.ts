import { AddCreditsDocument, OrganizationDocument, UpdateOrganizationDocument } from '../generated/graphql.js';
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

describe('credits', () => {
  it('are added by an owner or an admin on both doors', async () => {
    const org = await app.organization('Credits');
    const orgAdmin = await addUser(app, org, 'admin');
    const rest = await org.rest.post('/api/organization/credits', { amount: 250 });
    expect(rest.status).toBe(200);
    expect(rest.body.creditBalance).toBe(250);
    const { addCredits } = await orgAdmin.graphql.ok(AddCreditsDocument, { amount: 1_000_000 });
    expect(addCredits.creditBalance).toBe(1_000_250);
    expect(await balanceOf(org.organizationId)).toBe(1_000_250);
  });

  it.each([0, -5, 1_000_001])('amount %d → 400 naming amount on both doors', async (amount) => {
    const rest = await acme.rest.post('/api/organization/credits', { amount });
    expect(rest.status).toBe(400);
    expect(fieldsOf(rest.body.errors)).toEqual(['amount']);
    const gql = await acme.graphql.run(AddCreditsDocument, { amount });
    expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(['amount']);
  });

  it('a fractional or textual amount → 400 naming amount over REST', async () => {
    for (const amount of [1.5, '10']) {
      const rest = await acme.rest.post('/api/organization/credits', { amount });
      expect(rest.status).toBe(400);
      expect(fieldsOf(rest.body.errors)).toEqual(['amount']);
    }
  });

  it('a top-up past the integer column → 409 CONFLICT, the balance unchanged', async () => {
    const org = await app.organization('Full');
    await app.sql('update organizations set credit_balance = ? where id = ?', [2_147_000_000, org.organizationId]);
    const rest = await org.rest.post('/api/organization/credits', { amount: 1_000_000 });
    expect(rest.status).toBe(409);
    expect(await balanceOf(org.organizationId)).toBe(2_147_000_000);
  });
});

describe('spendCredits', () => {
  const spend = (organizationId: string, amount: number) =>
    app.gateway.services.organizations.spendCredits(app.db.database.orm.em.fork() as never, organizationId, amount);

  it('takes credits while the balance covers them, and refuses (taking nothing) when it does not', async () => {
    const org = await app.organization('Spender');
    await org.rest.post('/api/organization/credits', { amount: 10 });
    expect(await spend(org.organizationId, 4)).toBe(true);
    expect(await spend(org.organizationId, 6)).toBe(true);
    expect(await spend(org.organizationId, 1)).toBe(false);
    expect(await balanceOf(org.organizationId)).toBe(0);
    expect((await org.rest.get('/api/organization')).body.creditBalance).toBe(0);
  });

  it('many concurrent spends never take the balance below zero', async () => {
    const org = await app.organization('Race');
    await org.rest.post('/api/organization/credits', { amount: 100 });
    const results = await Promise.all(Array.from({ length: 40 }, () => spend(org.organizationId, 7)));
    expect(results.filter(Boolean)).toHaveLength(14);
    expect(await balanceOf(org.organizationId)).toBe(2);
  });

  it('spends in the caller’s transaction, so a rollback gives the credits back', async () => {
    const org = await app.organization('Rollback');
    await org.rest.post('/api/organization/credits', { amount: 5 });
    await expect(
      app.db.database.orm.em.fork().transactional(async (em) => {
        expect(await app.gateway.services.organizations.spendCredits(em as never, org.organizationId, 5)).toBe(true);
        throw new Error('call failed');
      }),
    ).rejects.toThrow('call failed');
    expect(await balanceOf(org.organizationId)).toBe(5);
  });

  it('refuses an amount that is not a positive integer', async () => {
    await expect(spend(acme.organizationId, 0)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(spend(acme.organizationId, 1.5)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
