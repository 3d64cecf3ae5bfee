import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { withClient } from '../support/pg-cluster.js';
import { operatorEnvironment, type OperatorEnvironment, startServer as startServerProcess, type ServerProcess } from '../support/entry-points.js';
import { LiveEventsDocument } from '../generated/graphql.js';
import { liveClient, type LiveClient } from './live-client.js';

// Two server processes on one PostgreSQL: a change made through replica A reaches a subscriber
// connected to replica B within a second (NOTIFY → B's LISTEN connection → the row, read by B);
// B's LISTEN connection terminated → it reconnects and catches up what committed meanwhile.
// PGlite is one process: there is no second replica to test (the same trigger feeds its own LISTEN).
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

const startServer = (env: Record<string, string>) => startServerProcess({ ...env, RUNNER_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '0' }, { logLevel: 'info' });

onPostgres('two replicas on one PostgreSQL', () => {
  const key = `replica_${'r'.repeat(32)}`;
  let operator: OperatorEnvironment;
  let a: ServerProcess;
  let b: ServerProcess;
  let live: LiveClient;
  let organizationId: string;

  const call = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    operator = await operatorEnvironment('replicas');
    a = await startServer({ ...operator.env, BOOTSTRAP_API_KEY: key });
    b = await startServer({ ...operator.env, BOOTSTRAP_API_KEY: key });
    organizationId = (await call(a, 'GET', '/api/users/me')).body.organizationId;
    live = liveClient(b.url, { 'x-api-key': key });
    await live.connected;
  }, 120_000);
  afterAll(async () => {
    await live?.close();
    for (const server of [a, b]) {
      if (!server) continue;
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await operator?.drop();
  }, 60_000);

  it('a change made through replica A reaches a subscriber on replica B', async () => {
    const events = live.subscribe(LiveEventsDocument, { types: ['agent.activated'] });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the subscribe message reaches B
    const agent = await call(a, 'POST', '/api/agents', { name: 'Across', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    const activated = await call(a, 'POST', `/api/agents/${agent.body.id}/activate`);
    expect(activated.status).toBe(200);
    const values = await events.until((got) => got.length >= 1);
    expect(values[0]!.events).toMatchObject({ type: 'agent.activated', organizationId, payload: { id: agent.body.id, status: 'active' } });
    events.dispose();
  }, 30_000);

  it('B’s LISTEN connection terminated: it reconnects and catches up the events committed while it was down', async () => {
    const events = live.subscribe(LiveEventsDocument, { types: ['agent.archived'] });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const database = new URL(operator.env.DATABASE_URL!).pathname.slice(1);
    const missed = randomUUID();
    // While the database takes no new connection (the open ones keep working): end every gateway-event-bus
    // connection (waiting until they are gone), and commit an event. Its NOTIFY goes out when no replica
    // listens, and none can listen again before connections are allowed: only B's catch-up can tell it.
    const writer = new pg.Client({ connectionString: operator.env.DATABASE_URL });
    await writer.connect();
    try {
      await withClient(TEST_DATABASE_URL!, (admin) => admin.query(`alter database ${database} allow_connections false`));
      const { rows } = await writer.query<{ ended: boolean }>(
        `select pg_terminate_backend(pid, 5000) as ended from pg_stat_activity where application_name = 'gateway-event-bus' and datname = $1`,
        [database],
      );
      expect(rows.map((row) => row.ended)).toEqual([true, true]);
      await writer.query(
        `insert into events (id, organization_id, type, created_at, payload) values ($1, $2, 'agent.archived', clock_timestamp(), $3::jsonb)`,
        [missed, organizationId, JSON.stringify({ id: missed, status: 'archived' })],
      );
      await new Promise((resolve) => setTimeout(resolve, 500)); // B tries to reconnect, and is refused
      expect(events.values).toEqual([]);
    } finally {
      await withClient(TEST_DATABASE_URL!, (admin) => admin.query(`alter database ${database} allow_connections true`));
      await writer.end();
    }
    const values = await events.until((got) => got.some((value) => value.events.id === missed));
    expect(values.filter((value) => value.events.id === missed)).toHaveLength(1);
    // B's log reaches us through its stdout, maybe after the event itself: wait for the line.
    const output = await b.outputWith(/"events":1,"msg":"event bus caught up after reconnecting"/);
    expect(output).toMatch(/event bus LISTEN connection lost; reconnecting/);
    expect(output).toMatch(/"events":1,"msg":"event bus caught up after reconnecting"/);

    // And live again: a change through A after the reconnect arrives once.
    const agent = await call(a, 'POST', '/api/agents', { name: 'After', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    expect((await call(a, 'DELETE', `/api/agents/${agent.body.id}`)).status).toBe(200);
    const after = await events.until((got) => got.some((value) => value.events.payload.id === agent.body.id));
    expect(after.filter((value) => value.events.payload.id === agent.body.id)).toHaveLength(1);
    events.dispose();
  }, 60_000);
});
