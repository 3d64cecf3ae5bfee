import { CreditLedgerDocument, EventsDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { testRunner } from '../runner/fixtures.js';

// The unfiltered credit ledger, events and calls lists read their `total` from list_row_counts (kept by
// triggers, folded by the runner), not by counting a million rows; the number stays exact, the same on
// both doors, and an organization's is its own. On PGlite and (TEST_DATABASE_URL) PostgreSQL.
describe('list totals kept, not counted', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app.close());

  const ledgerTotal = async (org: TestOrganization) => {
    const rest = (await org.rest.get('/api/organization/credit-ledger?limit=1')).body.meta.total;
    expect((await org.graphql.ok(CreditLedgerDocument, { limit: 1 })).creditLedger.meta.total).toBe(rest);
    return rest as number;
  };
  const eventsTotal = async (org: TestOrganization) => {
    const rest = (await org.rest.get('/api/events?limit=1')).body.meta.total;
    expect((await org.graphql.ok(EventsDocument, { limit: 1 })).events.meta.total).toBe(rest);
    return rest as number;
  };
  const counted = async (table: string, org: TestOrganization) =>
    Number((await app.sql<{ n: number }>(`select count(*)::int as n from ${table} where organization_id = ?`, [org.organizationId]))[0]!.n);
  const countRows = async (org: TestOrganization) =>
    Number((await app.sql<{ n: number }>('select count(*)::int as n from list_row_counts where organization_id = ?', [org.organizationId]))[0]!.n);

  it('answers the exact total on both doors as rows are written, folded and deleted', async () => {
    for (const amount of [5, 7, 9]) await acme.grantCredits(amount);
    await other.grantCredits(1);
    expect(await ledgerTotal(acme)).toBe(3);
    expect(await ledgerTotal(other)).toBe(1);
    expect(await ledgerTotal(acme)).toBe(await counted('credit_ledger', acme));
    expect(await eventsTotal(acme)).toBe(await counted('events', acme));

    // The runner folds an owner's rows into one; the totals do not move.
    expect(await countRows(acme)).toBeGreaterThan(2);
    await testRunner(app).tick();
    const rows = await app.sql<{ list: string; n: number }>(
      'select list, count(*)::int as n from list_row_counts where organization_id = ? group by list order by list',
      [acme.organizationId],
    );
    expect(rows.every((row) => Number(row.n) === 1)).toBe(true);
    expect(await ledgerTotal(acme)).toBe(3);
    expect(await eventsTotal(acme)).toBe(await counted('events', acme));

    // The total is the kept number, not a count of the rows (a number only the counter could give).
    await app.sql(`insert into list_row_counts (organization_id, list, scope_id, rows) values (?, 'credit_ledger', ?, 1000000)`, [
      acme.organizationId,
      acme.organizationId,
    ]);
    expect(await ledgerTotal(acme)).toBe(1_000_003);
    expect((await acme.rest.get('/api/organization/credit-ledger?kind=grant&limit=1')).body.meta.total).toBe(3); // a filter counts its matches
    await app.sql(`delete from list_row_counts where organization_id = ? and rows = 1000000`, [acme.organizationId]);

    // Events deleted by the retention go out of the total.
    await app.gateway.services.events.deleteOlderThan(new Date(Date.now() + 60_000));
    expect(await eventsTotal(acme)).toBe(0);
    expect(await counted('events', acme)).toBe(0);
    expect(await ledgerTotal(other)).toBe(1);
  });
});
