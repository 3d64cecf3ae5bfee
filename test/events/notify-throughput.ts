// How many events a second PostgreSQL NOTIFY carries to a live subscriber: writers commit events
// (each in its own transaction, as the app writes them, and in batches of 50), the events_notify
// trigger NOTIFYs, one PostgresEventBus LISTENs, and the LiveFeed reads each row by id and hands it
// to a subscriber. Prints events/s received and the lag from commit to the subscriber.
//   TEST_DATABASE_URL=postgres://… node --import @swc-node/register/esm-register test/events/notify-throughput.ts
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { openDatabase } from '../../src/db/orm.js';
import { PostgresEventBus } from '../../src/modules/events/event-bus.js';
import { LiveFeed } from '../../src/modules/events/subscriptions/live-feed.js';
import { withClient, withDatabase } from '../support/pg-cluster.js';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('Set TEST_DATABASE_URL to a PostgreSQL server');
const SECONDS = Number(process.env.SECONDS ?? 5);
const WRITERS = Number(process.env.WRITERS ?? 8);

const name = `gateway_notify_${randomUUID().replaceAll('-', '')}`;
await withClient(url, (client) => client.query(`create database ${name}`));
const databaseUrl = withDatabase(url, name);
const logger = pino({ level: 'warn' });
try {
  const database = await openDatabase({ databaseUrl, dataDir: 'memory://', migrate: true });
  const organizationId = randomUUID();
  await database.em
    .fork()
    .getConnection()
    .execute(`insert into organizations (id, name, created_at, updated_at) values (?, 'Bench', now(), now())`, [organizationId]);
  const bus = new PostgresEventBus({ connectionString: databaseUrl, logger });
  await bus.start();
  const feed = new LiveFeed(database.em, logger);
  feed.attach(bus);

  for (const batch of [1, 50]) {
    const stream = feed.subscribe(organizationId);
    const committedAt = new Map<string, number>();
    let received = 0;
    const lags: number[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        received += 1;
        const at = committedAt.get(event.id);
        if (at !== undefined) lags.push(Date.now() - at);
      }
    })();
    const pool = new pg.Pool({ connectionString: databaseUrl, max: WRITERS });
    const deadline = Date.now() + SECONDS * 1000;
    let written = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (Date.now() < deadline) {
          const ids = Array.from({ length: batch }, () => randomUUID());
          const values = ids.map((_, i) => `($${i + 2}, $1, 'execution.progress', clock_timestamp(), '{"id":"x","contactsCompleted":1}'::jsonb)`).join(', ');
          await pool.query(`insert into events (id, organization_id, type, created_at, payload) values ${values}`, [organizationId, ...ids]);
          const now = Date.now();
          for (const id of ids) committedAt.set(id, now);
          written += batch;
        }
      }),
    );
    const wroteIn = SECONDS;
    const drainStart = Date.now();
    while (received < written && Date.now() - drainStart < 30_000) await new Promise((resolve) => setTimeout(resolve, 20));
    const total = (Date.now() - deadline) / 1000 + wroteIn;
    await stream.return();
    await reading;
    await pool.end();
    lags.sort((x, y) => x - y);
    const p = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? NaN;
    console.log(
      JSON.stringify({
        eventsPerTransaction: batch,
        writers: WRITERS,
        written,
        received,
        writtenPerSecond: Math.round(written / wroteIn),
        receivedPerSecond: Math.round(received / total),
        lagMs: { p50: p(0.5), p99: p(0.99), max: lags[lags.length - 1] },
      }),
    );
  }
  await bus.stop();
  await database.close();
} finally {
  await withClient(url, (client) => client.query(`drop database if exists ${name} with (force)`));
}
