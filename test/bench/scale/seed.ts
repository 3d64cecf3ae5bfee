// The scale section's data, written in SQL (generate_series), not through the API: `rows` contacts of one
// organization (one a second from 2026-01-01, a tier, a time zone), a static audience whose members are
// all of them, as many credit ledger entries (a list with one fixed order, paged by its keyset), in
// batches, then VACUUM ANALYZE as autovacuum would leave the tables.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../../src/db/orm.js';

const BATCH = 100_000;

export interface ScaleSeed {
  audienceId: string;
  seconds: number;
}

/** Seeds the organization on PostgreSQL (`databaseUrl`) or the embedded database in `dataDir`; the gateway must not be running on it. */
export async function seedScale(
  target: { databaseUrl?: string; dataDir: string },
  organizationId: string,
  rows: number,
  log: (line: string) => void,
): Promise<ScaleSeed> {
  const started = Date.now();
  const database = await openDatabase({ ...target, migrate: true, pool: { max: 2, acquireTimeoutMs: 60_000, statementTimeoutMs: 0 } });
  const em = database.em.fork();
  try {
    for (let from = 1; from <= rows; from += BATCH) {
      const to = Math.min(rows, from + BATCH - 1);
      await em.execute(
        `insert into contacts (id, created_at, updated_at, organization_id, name, phone, time_zone, attributes, opted_out)
         select gen_random_uuid(), t, t, ?, 'Contact ' || i, '+1' || (2000000000 + i)::text,
           (array['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Europe/Berlin'])[1 + i % 4],
           jsonb_build_object('tier', case when i % 10 = 0 then 'gold' else 'basic' end, 'renewal', to_char(date '2026-01-01' + (i % 365), 'YYYY-MM-DD')),
           false
         from generate_series(?::int, ?::int) i, lateral (select timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second' as t) at`,
        [organizationId, from, to],
      );
      log(`    contacts ${to.toLocaleString('en')} / ${rows.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    const audienceId = randomUUID();
    await em.execute(`insert into audiences (id, created_at, updated_at, organization_id, name, kind) values (?, now(), now(), ?, 'Everyone', 'static')`, [
      audienceId,
      organizationId,
    ]);
    for (let from = 1; from <= rows; from += BATCH) {
      const to = Math.min(rows, from + BATCH - 1);
      await em.execute(
        `insert into audience_members (id, created_at, updated_at, organization_id, audience_id, contact_id)
         select gen_random_uuid(), now(), now(), c.organization_id, ?, c.id from contacts c
         where c.organization_id = ? and c.created_at >= timestamptz '2026-01-01 00:00:00+00' + ?::int * interval '1 second'
           and c.created_at <= timestamptz '2026-01-01 00:00:00+00' + ?::int * interval '1 second'`,
        [audienceId, organizationId, from, to],
      );
      log(`    members ${to.toLocaleString('en')} / ${rows.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    for (let from = 1; from <= rows; from += BATCH) {
      const to = Math.min(rows, from + BATCH - 1);
      await em.execute(
        `insert into credit_ledger (id, organization_id, kind, amount, balance_after, reason, created_at)
         select gen_random_uuid(), ?, 'grant', 1, i, null, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second'
         from generate_series(?::int, ?::int) i`,
        [organizationId, from, to],
      );
      log(`    credit ledger ${to.toLocaleString('en')} / ${rows.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    await em.execute('vacuum analyze credit_ledger');
    await em.execute('vacuum analyze contacts');
    await em.execute('vacuum analyze audience_members');
    await em.execute('vacuum analyze audiences');
    return { audienceId, seconds: (Date.now() - started) / 1000 };
  } finally {
    await database.close();
  }
}
