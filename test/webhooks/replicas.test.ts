import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestContext } from '@mikro-orm/core';
import { createGateway } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/common/logger.js';
import { openDatabase, type Database } from '../../src/db/orm.js';
import { EventWriter } from '../../src/modules/events/event-writer.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js';
import { RestClient } from '../helpers/clients.js';
import { createTestDatabase, seedMigratedDataDir, TEST_DATABASE_URL } from '../helpers/database.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { drain, TestClock } from './fixtures.js';
import { WebhookReceiver } from './receiver.js';

// Deliveries survive a restart (none lost) and two workers on one database never send the same
// attempt: on PGlite a database on disk reopened, on PostgreSQL two processes' worth of pools on one database.
const key = randomBytes(32);
const config: Config = {
  ...loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: '/tmp/gateway-test-unused', LOG_LEVEL: 'silent' }),
  nodeEnv: 'test',
  rateLimit: { perMinute: 0, anonymousPerMinute: 0, organizationPerMinute: 0 },
  telephony: { twilioApiBaseUrl: 'https://api.twilio.com', credentialsKey: key },
  webhooks: { allowPrivate: true, timeoutMs: 2000 },
};
let receiver: WebhookReceiver;
beforeEach(async () => {
  receiver = await new WebhookReceiver().start();
});
afterEach(() => receiver.close());

/** A gateway serving `database` on an ephemeral port: one replica. */
async function replica(database: Database) {
  const gateway = await createGateway(config, database, createLogger('silent'));
  const server: Server = await new Promise((resolve) => {
    const listening = gateway.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    gateway,
    rest: (apiKey: string) => new RestClient(baseUrl, { 'x-api-key': apiKey }),
    worker: (clock: TestClock, batch?: number) =>
      new WebhookWorker({ em: database.em, credentialsKey: () => key, allowPrivate: true, timeoutMs: 2000, clock: clock.now, random: () => 0.5, batch }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.stop();
    },
  };
}

it('delivers after a restart what was pending before it, each once', async () => {
  // The same data twice: an on-disk PGlite directory, or one PostgreSQL database.
  const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-restart-'));
  const test = TEST_DATABASE_URL ? await createTestDatabase() : undefined;
  if (!test) await seedMigratedDataDir(dataDir);
  const open = () => (test ? openDatabase({ databaseUrl: test.url, dataDir: 'memory://', migrate: false }) : openDatabase({ dataDir, migrate: true }));
  try {
    let database = test ? test.database : await open();
    const first = await replica(database);
    const org = await RequestContext.create(database.orm.em, () =>
      first.gateway.services.provisioning.createOrganization({ name: 'Restart', email: 'restart@example.test' }),
    );
    const rest = first.rest(org.apiKey);
    const endpoint = await rest.post('/api/webhook-endpoints', { url: `${receiver.url}/hooks`, eventTypes: ['agent.activated'] });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [endpoint.body.secret];
    for (let i = 0; i < 3; i++) {
      const agent = await rest.post('/api/agents', { name: `Agent ${i}`, instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
      expect((await rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    }
    // The first replica stops before its worker sent anything.
    await first.close();
    await database.close();
    expect(receiver.received).toHaveLength(0);

    database = await open();
    const second = await replica(database);
    try {
      expect(await drain(second.worker(new TestClock()))).toBe(3);
      const events = (await second.rest(org.apiKey).get('/api/events?type=agent.activated')).body.data as { id: string }[];
      expect(events).toHaveLength(3);
      expect([...receiver.counts().entries()].sort()).toEqual(events.map((event) => [event.id, 1]).sort());
      expect(receiver.received.every((request) => request.verifiedWith.length === 1)).toBe(true);
      const deliveries = (await second.rest(org.apiKey).get(`/api/webhook-endpoints/${endpoint.body.id}/deliveries`)).body.data as { status: string }[];
      expect(deliveries.map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    } finally {
      await second.close();
      await database.close();
    }
  } finally {
    if (test) await test.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);

it('never sends the same attempt twice when two workers tick at once', async () => {
  const test = await createTestDatabase();
  // On PostgreSQL the second worker has its own pool, as another replica would; PGlite has one connection.
  const secondDatabase = test.url ? await openDatabase({ databaseUrl: test.url, dataDir: 'memory://', migrate: false }) : test.database;
  const app = await replica(test.database);
  try {
    const org = await RequestContext.create(test.database.orm.em, () =>
      app.gateway.services.provisioning.createOrganization({ name: 'Twins', email: 'twins@example.test' }),
    );
    const endpoint = await app.rest(org.apiKey).post('/api/webhook-endpoints', { url: `${receiver.url}/hooks` });
    receiver.secrets = [endpoint.body.secret];
    // 40 events written the raw way (EventWriter.write in one transaction): the trigger fans each out.
    await test.database.em
      .fork()
      .transactional((tx) =>
        EventWriter.write(
          tx,
          ...Array.from({ length: 40 }, (_, i) => ({ organizationId: org.organizationId, type: 'execution.progress' as const, payload: { n: i } })),
        ),
      );
    receiver.answer = () => 200;
    const clock = new TestClock();
    const one = new WebhookWorker({ em: test.database.em, credentialsKey: () => key, allowPrivate: true, timeoutMs: 2000, clock: clock.now, batch: 4 });
    const two = new WebhookWorker({ em: secondDatabase.em, credentialsKey: () => key, allowPrivate: true, timeoutMs: 2000, clock: clock.now, batch: 4 });
    const [sentByOne, sentByTwo] = await Promise.all([drain(one), drain(two)]);
    expect(sentByOne + sentByTwo).toBe(40);
    expect(sentByOne).toBeGreaterThan(0);
    expect(sentByTwo).toBeGreaterThan(0);
    // Each webhook-id arrived once (one attempt each), and the attempts log holds one row per delivery.
    expect(receiver.received).toHaveLength(40);
    expect([...receiver.counts().values()].every((count) => count === 1)).toBe(true);
    expect(receiver.received.map((request) => request.parsed.data.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    const rows = await test.database.em
      .fork()
      .execute(
        `select attempts, (select count(*)::int from webhook_delivery_attempts a where a.delivery_id = d.id) as logged, status from webhook_deliveries d`,
      );
    expect(rows).toHaveLength(40);
    expect(rows.every((row: any) => row.attempts === 1 && row.logged === 1 && row.status === 'succeeded')).toBe(true);
  } finally {
    await app.close();
    if (secondDatabase !== test.database) await secondDatabase.close();
    await test.drop();
  }
}, 90_000);

it('lets another worker take a delivery over only when the claim’s lease has run out, and drops the late answer of the first', async () => {
  const test = await createTestDatabase();
  const app = await replica(test.database);
  try {
    const org = await RequestContext.create(test.database.orm.em, () =>
      app.gateway.services.provisioning.createOrganization({ name: 'Lease', email: 'lease@example.test' }),
    );
    const rest = app.rest(org.apiKey);
    const endpoint = await rest.post('/api/webhook-endpoints', { url: `${receiver.url}/hooks` });
    receiver.secrets = [endpoint.body.secret];
    receiver.answer = (n) => (n === 0 ? 'hang' : 200);
    await test.database.em
      .fork()
      .transactional((tx) => EventWriter.write(tx, { organizationId: org.organizationId, type: 'agent.activated', payload: { id: 'a' } }));
    const clock = new TestClock();
    // The first worker claims attempt 1 and hangs on the receiver (as a replica that died mid-send would hold it).
    const first = new WebhookWorker({ em: test.database.em, credentialsKey: () => key, allowPrivate: true, timeoutMs: 1500, clock: clock.now });
    const firstTick = first.tick();
    // Until the first request arrives, up to 10 s.
    for (let i = 0; i < 500 && receiver.received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(receiver.received).toHaveLength(1);
    const second = new WebhookWorker({ em: test.database.em, credentialsKey: () => key, allowPrivate: true, timeoutMs: 1500, clock: clock.now });
    expect(await second.tick()).toBe(0); // the lease holds it
    clock.advance(1500 + 60_000 + 1000); // past the lease (timeout + 60 s)
    expect(await second.tick()).toBe(1); // attempt 2, answered 200
    expect(await firstTick).toBe(1); // the first times out now; its record no longer moves the delivery
    const [delivery] = (await rest.get(`/api/webhook-endpoints/${endpoint.body.id}/deliveries`)).body.data;
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 2, lastStatusCode: 200 });
    expect(delivery.attempts.map((attempt: { attempt: number; statusCode: number | null }) => [attempt.attempt, attempt.statusCode])).toEqual([
      [1, null],
      [2, 200],
    ]);
    expect(receiver.received.map((request) => request.id)).toEqual([delivery.messageId, delivery.messageId]);
    // The late failure does not count against the endpoint, whose last delivery succeeded.
    expect(await test.database.em.fork().execute('select failing_since from webhook_endpoints')).toEqual([{ failing_since: null }]);
  } finally {
    await app.close();
    await test.drop();
  }
}, 60_000);
