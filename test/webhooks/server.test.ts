import { jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { openDatabase } from '../../src/db/orm.js';
import { SEALED_COLUMNS } from '../../src/modules/sealed-secrets/sealed-columns.js';
import { seal } from '../../src/platform/credentials.js';
import { freePort } from '../support/pg-cluster.js';
import { CLI, MAIN, operatorEnvironment, runScript, type OperatorEnvironment, startServer as startServerProcess } from '../support/entry-points.js';
import { RestClient } from '../helpers/clients.js';
import { WebhookReceiver } from './receiver.js';

// The built server as an operator runs it: its webhook worker sends deliveries with no test ticking
// it, stops with the server, and a database holding endpoints needs CREDENTIALS_KEY to start.
jest.setTimeout(120_000);

const API_KEY = `whk_${randomBytes(24).toString('hex')}`;
let operator: OperatorEnvironment;
let receiver: WebhookReceiver;
beforeAll(async () => {
  operator = await operatorEnvironment('webhooks');
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver?.close();
  await operator?.drop();
});

const startServer = (env: Record<string, string>) => startServerProcess({ ...operator.env, ...env });

it('sends deliveries from the server’s own worker, stops on SIGTERM, and will not start over endpoints without CREDENTIALS_KEY or with another', async () => {
  const key = randomBytes(32).toString('base64');
  const server = await startServer({ CREDENTIALS_KEY: key, WEBHOOK_ALLOW_PRIVATE: 'true', BOOTSTRAP_API_KEY: API_KEY, RUNNER_ENABLED: 'false' });
  try {
    const rest = new RestClient(server.url, { 'x-api-key': API_KEY });
    const endpoint = await rest.post('/api/webhook-endpoints', { url: `${receiver.url}/hooks`, eventTypes: ['agent.activated'] });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [endpoint.body.secret];
    const agent = await rest.post('/api/agents', { name: 'Live', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
    expect((await rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    for (let i = 0; i < 100 && receiver.received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.parsed).toMatchObject({ type: 'agent.activated', data: { id: agent.body.id } });
    expect(receiver.received[0]!.verifiedWith).toEqual([0]);
  } finally {
    server.child.kill('SIGTERM');
  }
  expect(await server.exited).toBe(0);

  const refused = await runScript(MAIN, [], { ...operator.env, HOST: '127.0.0.1', PORT: String(await freePort()), CREDENTIALS_KEY: '' });
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
  expect(refused.stderr).toMatch(/^Cannot start: CREDENTIALS_KEY is not set, but the database holds 1 webhook endpoint whose signing secrets it seals/);

  // Another key than the one the secret was sealed with: refused the same way, naming the variable. (On a port
  // in use: a start that got past the check would stop there, not listen.)
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const busyPort = String((blocker.address() as AddressInfo).port);
  const wrongKey = await runScript(MAIN, [], { ...operator.env, HOST: '127.0.0.1', PORT: busyPort, CREDENTIALS_KEY: randomBytes(32).toString('base64') });
  await new Promise((resolve) => blocker.close(resolve));
  expect(wrongKey.code).toBe(1);
  expect(wrongKey.stderr.trim().split('\n')).toHaveLength(1);
  expect(wrongKey.stderr).toMatch(/^Cannot start: CREDENTIALS_KEY does not open the webhook endpoints’ signing secrets stored in the database/);
});

it('a lost CREDENTIALS_KEY: the refusal names the way out, credentials:check lists what the new key does not open, credentials:reset --yes mends it and the server starts and signs with the new secret', async () => {
  const lost = await operatorEnvironment('webhooks-lost-key');
  try {
    const start = (env: Record<string, string>) =>
      startServerProcess({ ...lost.env, WEBHOOK_ALLOW_PRIVATE: 'true', BOOTSTRAP_API_KEY: API_KEY, RUNNER_ENABLED: 'false', ...env });
    const oldKey = randomBytes(32).toString('base64');
    const first = await start({ CREDENTIALS_KEY: oldKey });
    let rotated: string;
    let plain: string;
    let organizationId: string;
    try {
      const rest = new RestClient(first.url, { 'x-api-key': API_KEY });
      organizationId = (await rest.get('/api/users/me')).body.organizationId;
      rotated = (await rest.post('/api/webhook-endpoints', { url: `${receiver.url}/rotated`, eventTypes: ['agent.activated'] })).body.id;
      expect((await rest.post(`/api/webhook-endpoints/${rotated}/rotate-secret`)).status).toBe(200);
      plain = (await rest.post('/api/webhook-endpoints', { url: `${receiver.url}/plain`, eventTypes: ['agent.archived'] })).body.id;
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exited).toBe(0);

    // A carrier connection sealed with the same key, with a number on it; and every sealed column of the schema is one the CLI knows.
    const connectionId = randomUUID();
    const numberId = randomUUID();
    const database = await openDatabase({ databaseUrl: lost.env.DATABASE_URL, dataDir: lost.dataDir, migrate: false });
    try {
      const connection = database.em.fork().getConnection();
      await connection.execute(
        `insert into carrier_connections (id, created_at, updated_at, organization_id, name, carrier, account_sid, auth_token_encrypted, auth_token_last4, calls_per_second)
         values (?, now(), now(), ?, 'Twilio', 'twilio', ?, ?, 'abcd', 1)`,
        [connectionId, organizationId, `AC${'a'.repeat(32)}`, seal('0'.repeat(28) + 'abcd', Buffer.from(oldKey, 'base64'))],
      );
      await connection.execute(
        `insert into phone_numbers (id, created_at, updated_at, organization_id, number, carrier_connection_id) values (?, now(), now(), ?, '+14155550100', ?)`,
        [numberId, organizationId, connectionId],
      );
      const columns = (await connection.execute(
        `select table_name || '.' || column_name as name from information_schema.columns where table_schema = current_schema() and column_name like '%\\_encrypted' order by 1`,
      )) as { name: string }[];
      expect(columns.map((column) => column.name)).toEqual(SEALED_COLUMNS.map((column) => `${column.table}.${column.column}`).sort());
    } finally {
      await database.close();
    }

    // The key is lost: a new one. The start refuses, and says what to do.
    const newKey = randomBytes(32).toString('base64');
    const refused = await runScript(MAIN, [], { ...lost.env, HOST: '127.0.0.1', PORT: String(await freePort()), CREDENTIALS_KEY: newKey });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/does not open the .* stored in the database.*npm run cli -- credentials:reset/);

    const cli = (args: string[]) => runScript(CLI, args, { ...lost.env, CREDENTIALS_KEY: newKey });
    const lines = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    const check = await cli(['credentials:check']);
    expect(check.code).toBe(0);
    const listed = lines(check.stdout);
    expect(listed.at(-1)).toEqual({ sealed: 4, unopened: 4 });
    expect(listed.slice(0, -1)).toEqual(
      expect.arrayContaining([
        { kind: 'webhookEndpoint', id: rotated, field: 'secret', organizationId, organization: 'Default', label: `${receiver.url}/rotated` },
        { kind: 'webhookEndpoint', id: rotated, field: 'previousSecret', organizationId, organization: 'Default', label: `${receiver.url}/rotated` },
        { kind: 'webhookEndpoint', id: plain, field: 'secret', organizationId, organization: 'Default', label: `${receiver.url}/plain` },
        { kind: 'carrierConnection', id: connectionId, field: 'authToken', organizationId, organization: 'Default', label: 'Twilio' },
      ]),
    );

    // Without --yes nothing changes.
    const unconfirmed = await cli(['credentials:reset']);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toMatch(/run it with --yes/);
    expect(lines((await cli(['credentials:check', '--org', 'Default'])).stdout).at(-1)).toEqual({ sealed: 4, unopened: 4 });

    const reset = await cli(['credentials:reset', '--yes']);
    expect(reset.code).toBe(0);
    const changes = lines(reset.stdout);
    expect(changes.map((change) => [change.action, change.id])).toEqual(
      expect.arrayContaining([
        ['newSecret', rotated],
        ['newSecret', plain],
        ['removed', connectionId],
      ]),
    );
    expect(changes).toHaveLength(3);
    const secretOf = (id: string) => changes.find((change) => change.id === id).secret as string;
    expect(secretOf(rotated)).toMatch(/^whsec_/);
    expect(lines((await cli(['credentials:check'])).stdout)).toEqual([{ sealed: 2, unopened: 0 }]);

    // The server starts with the new key; a delivery verifies with the new secret; the number stays, without its connection.
    const second = await start({ CREDENTIALS_KEY: newKey });
    try {
      const rest = new RestClient(second.url, { 'x-api-key': API_KEY });
      const endpoint = (await rest.get(`/api/webhook-endpoints/${rotated}`)).body;
      expect(endpoint).toMatchObject({ secretHint: secretOf(rotated).slice(-4), previousSecretExpiresAt: null });
      expect((await rest.get(`/api/carrier-connections/${connectionId}`)).status).toBe(404);
      expect((await rest.get(`/api/phone-numbers/${numberId}`)).body).toMatchObject({ id: numberId, carrierConnectionId: null });
      receiver.secrets = [secretOf(rotated)];
      const delivered = receiver.next();
      const agent = await rest.post('/api/agents', { name: 'After the reset', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
      expect((await rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
      const request = await delivered;
      expect(request.parsed).toMatchObject({ type: 'agent.activated', data: { id: agent.body.id } });
      expect(request.verifiedWith).toEqual([0]);
    } finally {
      second.child.kill('SIGTERM');
    }
    expect(await second.exited).toBe(0);
  } finally {
    await lost.drop();
  }
});
