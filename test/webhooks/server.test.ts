import { jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { freePort } from '../support/pg-cluster.js';
import { MAIN, ROOT, operatorEnvironment, runScript, type OperatorEnvironment, startServer as startServerProcess, type ServerProcess } from '../support/entry-points.js';
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
