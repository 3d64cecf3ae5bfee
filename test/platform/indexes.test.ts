import { randomUUID } from 'node:crypto';
import { REDUNDANT_INDEXES } from '../../migrations/Migration20270101100000.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// Migration20270101100000 dropped the plain indexes that a keyset index begins with. What they served —
// a look-up by the owner's id (and the foreign key's checks on a delete), and the owner's rows newest
// first — is still read by an index, on PGlite and (TEST_DATABASE_URL) PostgreSQL. Sequential scans,
// bitmap scans and sorts are discouraged for the plan only, so that a near-empty table is not read
// whole (or sorted) because it is small.
describe('the indexes a keyset index made redundant', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  async function plan(sql: string): Promise<string> {
    return db.database.em.fork().transactional(async (em) => {
      // A plan with a Sort (or a sequential scan) left in it after these are discouraged has no index that serves it.
      for (const kind of ['seqscan', 'bitmapscan', 'sort']) await em.execute(`set local enable_${kind} = off`);
      const rows = await em.execute<Record<string, string>[]>(`explain ${sql}`);
      return rows.map((row) => Object.values(row)[0]).join('\n');
    });
  }

  it('are gone, and the keyset index that covers each is there', async () => {
    const names = new Set(
      (await db.database.em.fork().execute<{ indexname: string }[]>(`select indexname from pg_indexes where schemaname = 'public'`)).map(
        (row) => row.indexname,
      ),
    );
    for (const [, index, , keyset] of REDUNDANT_INDEXES) {
      expect([index, names.has(index)]).toEqual([index, false]);
      expect([keyset, names.has(keyset)]).toEqual([keyset, true]);
    }
  });

  it.each(REDUNDANT_INDEXES)('%s: what %s served is read by an index', async (table, _index, columns) => {
    const [owner, second] = columns;
    const lookUp = await plan(`select id from "${table}" where "${owner}" = '${randomUUID()}'`);
    expect(lookUp).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
    expect(lookUp).not.toMatch(/Seq Scan/);
    if (second) {
      const newest = await plan(`select id from "${table}" where "${owner}" = '${randomUUID()}' order by "${second}" desc limit 20`);
      expect(newest).toMatch(/Index (Only )?Scan/);
      expect(newest).not.toMatch(/Seq Scan|Sort/);
    }
  });
});
