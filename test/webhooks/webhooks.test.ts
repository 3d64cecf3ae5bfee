import {
  CreateWebhookDeliveryDocument,
  CreateWebhookEndpointDocument,
  DeleteWebhookEndpointDocument,
  RotateWebhookEndpointSecretDocument,
  TestWebhookEndpointDocument,
  UpdateWebhookEndpointDocument,
  WebhookEndpointDeliveriesDocument,
  WebhookEndpointDocument,
  WebhookEndpointsDocument,
  WebhookEndpointsWithDeliveriesDocument,
} from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { MAX_WEBHOOK_ENDPOINTS } from '../../src/modules/webhooks/webhook-endpoint.service.js';
import { drain, startWebhookApp, TestClock, worker } from './fixtures.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js';
import { createLogger } from '../../src/common/logger.js';
import { addCredits, ALWAYS_ANSWERED, buildCampaign, buildRunner, readExecution, tickUntil } from '../campaigns/fixtures.js';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/webhook-schedule.js';
import { seal } from '../../src/platform/credentials.js';
import { randomBytes } from 'node:crypto';
import { WebhookReceiver } from './receiver.js';

// Webhooks: endpoints and delivery, one describe each (they were one file each), each on its own app(s) and database(s).
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('endpoints', () => {
  // Webhook endpoints on both doors: CRUD, the same bad input → the same code, SSRF refused, another
  // organization's id → 404 on every route, and the secret only in the create and rotate answers.
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  const logs: string[] = [];
  /** A public address needs no DNS lookup in a sandbox without network. */
  const PUBLIC = 'https://93.184.215.14/hooks';

  beforeAll(async () => {
    app = await startWebhookApp({ logLevel: 'trace', webhooks: { allowPrivate: false, timeoutMs: 1000 } }, { write: (line: string) => void logs.push(line) });
    acme = await app.organization('Acme');
    other = await app.organization('Other');
  });
  afterAll(() => app?.close());

  const secrets: string[] = [];

  it('creates, reads, lists, changes and deletes an endpoint on both doors; the secret is in the create answer only', async () => {
    const created = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC, eventTypes: ['call.ended', 'execution.completed'], description: 'CRM' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      organizationId: acme.organizationId,
      url: PUBLIC,
      eventTypes: ['call.ended', 'execution.completed'],
      description: 'CRM',
      enabled: true,
      disabledReason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      secretHint: created.body.secret.slice(-4),
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    secrets.push(created.body.secret);
    const { secret: _secret, ...shown } = created.body;
    expect((await acme.rest.get(`/api/webhook-endpoints/${created.body.id}`)).body).toEqual(shown);
    expect((await acme.graphql.ok(WebhookEndpointDocument, { id: created.body.id })).webhookEndpoint).toEqual(shown);

    const graphql = await acme.graphql.ok(CreateWebhookEndpointDocument, { input: { url: `${PUBLIC}/2`, description: 'all types' } });
    expect(graphql.createWebhookEndpoint).toMatchObject({ eventTypes: [], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    secrets.push(graphql.createWebhookEndpoint.secret);

    const list = await acme.rest.get('/api/webhook-endpoints?sortBy=url&sortOrder=asc');
    expect(list.body.meta).toMatchObject({ page: 1, limit: 20, total: 2 });
    expect(list.body.data.map((endpoint: { url: string }) => endpoint.url)).toEqual([PUBLIC, `${PUBLIC}/2`]);
    expect((await acme.graphql.ok(WebhookEndpointsDocument, { sortBy: 'url', sortOrder: 'asc' })).webhookEndpoints).toEqual(list.body);
    expect((await acme.rest.get('/api/webhook-endpoints?search=crm')).body.meta.total).toBe(1);
    expect((await other.rest.get('/api/webhook-endpoints')).body.meta.total).toBe(0);

    const changed = await acme.rest.put(`/api/webhook-endpoints/${created.body.id}`, { eventTypes: ['call.started'], description: null });
    expect(changed.body).toMatchObject({ eventTypes: ['call.started'], description: null, url: PUBLIC });
    const disabled = await acme.graphql.ok(UpdateWebhookEndpointDocument, { id: created.body.id, input: { enabled: false } });
    expect(disabled.updateWebhookEndpoint).toMatchObject({ enabled: false, disabledReason: null, eventTypes: ['call.started'] });

    expect((await acme.rest.delete(`/api/webhook-endpoints/${created.body.id}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/webhook-endpoints/${created.body.id}`)).status).toBe(404);
    const deleted = await acme.graphql.ok(DeleteWebhookEndpointDocument, { id: graphql.createWebhookEndpoint.id });
    expect(deleted.deleteWebhookEndpoint.id).toBe(graphql.createWebhookEndpoint.id);
  });

  it('answers the same bad input with the same code on both doors', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['url', { url: 'not a url' }],
      ['url', { url: 'ftp://93.184.215.14/x' }],
      ['url', { url: 'http://93.184.215.14/hooks' }], // http only with WEBHOOK_ALLOW_PRIVATE
      ['url', { url: 'https://user:pass@93.184.215.14/hooks' }],
      ['eventTypes', { url: PUBLIC, eventTypes: ['call.ended', 'call.exploded'] }],
      ['eventTypes', { url: PUBLIC, eventTypes: ['webhook.test'] }],
      ['description', { url: PUBLIC, description: 'x'.repeat(501) }],
    ];
    for (const [field, input] of cases) {
      const body = { url: PUBLIC, ...input };
      const rest = await acme.rest.post('/api/webhook-endpoints', body);
      expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(rest.body.errors.map((error: { field: string }) => error.field)).toContain(field);
      const graphql = await acme.graphql.run(CreateWebhookEndpointDocument, { input: body as never });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
    expect((await acme.rest.get('/api/webhook-endpoints')).body.meta.total).toBe(0);
  });

  it('refuses URLs that reach private, loopback, link-local, CGNAT or metadata addresses (SSRF), on create and update, on both doors', async () => {
    const refused = [
      'https://127.0.0.1/hooks',
      'https://localhost:8443/hooks',
      'https://10.0.0.5/hooks',
      'https://192.168.1.10/hooks',
      'https://172.16.0.1/hooks',
      'https://100.64.0.1/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hooks',
      'https://[fd00:ec2::254]/hooks',
      'https://[fe80::1]/hooks',
      'https://[::ffff:127.0.0.1]/hooks',
      'https://0.0.0.0/hooks',
    ];
    for (const url of refused) {
      const rest = await acme.rest.post('/api/webhook-endpoints', { url });
      expect([url, rest.status, rest.body.code]).toEqual([url, 400, 'BAD_USER_INPUT']);
      expect(rest.body.errors[0]).toEqual({
        field: 'url',
        message: expect.stringMatching(/^url is refused: .*private, loopback, link-local or reserved address$/),
      });
      const graphql = await acme.graphql.run(CreateWebhookEndpointDocument, { input: { url } });
      expect([url, graphql.errors?.[0]?.extensions.code]).toEqual([url, 'BAD_USER_INPUT']);
    }
    const { body } = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC });
    secrets.push(body.secret);
    expect((await acme.rest.put(`/api/webhook-endpoints/${body.id}`, { url: 'https://169.254.169.254/' })).body.code).toBe('BAD_USER_INPUT');
    const graphql = await acme.graphql.run(UpdateWebhookEndpointDocument, { id: body.id, input: { url: 'https://[fd00:ec2::254]/' } });
    expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect((await acme.rest.get(`/api/webhook-endpoints/${body.id}`)).body.url).toBe(PUBLIC);
  });

  it('answers one message whether the host resolves to a private address or does not resolve (no DNS oracle), on create and update, on both doors; the log has the reason and the request id', async () => {
    const { body: endpoint } = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC });
    secrets.push(endpoint.secret);
    const messages = new Set<string>();
    const graphqlRequestIds: (string | undefined)[] = [];
    for (const [index, url] of ['https://localhost/hooks', 'https://does-not-exist.invalid/hooks'].entries()) {
      const created = await acme.rest.with({ 'x-request-id': `oracle-${index}-rest` }).post('/api/webhook-endpoints', { url });
      expect([url, created.status, created.body.code]).toEqual([url, 400, 'BAD_USER_INPUT']);
      const updated = await acme.rest.put(`/api/webhook-endpoints/${endpoint.id}`, { url });
      const graphqlCreated = await acme.graphql.run(CreateWebhookEndpointDocument, { input: { url } });
      const graphqlUpdated = await acme.graphql.run(UpdateWebhookEndpointDocument, { id: endpoint.id, input: { url } });
      for (const message of [
        created.body.detail,
        created.body.errors[0].message,
        updated.body.detail,
        graphqlCreated.errors?.[0]?.message,
        graphqlUpdated.errors?.[0]?.message,
      ]) {
        messages.add(message);
      }
      expect(graphqlCreated.errors?.[0]?.extensions.errors).toEqual(created.body.errors);
      graphqlRequestIds.push(graphqlCreated.errors?.[0]?.extensions.requestId);
    }
    expect([...messages]).toEqual(['url is refused: its host does not resolve, or resolves to a private, loopback, link-local or reserved address']);
    expect((await acme.rest.get(`/api/webhook-endpoints/${endpoint.id}`)).body.url).toBe(PUBLIC);
    const refusals = logs.map((line) => JSON.parse(line)).filter((line) => line.reason && /refused$/.test(line.msg));
    expect(refusals.find((line) => line.requestId === 'oracle-0-rest')).toMatchObject({
      level: 30,
      field: 'url',
      reason: expect.stringMatching(/^The host localhost resolves to (127\.0\.0\.1|::1)/),
    });
    expect(refusals.find((line) => line.requestId === 'oracle-1-rest')).toMatchObject({
      level: 30,
      reason: 'The host does-not-exist.invalid does not resolve',
    });
    expect(refusals.find((line) => line.requestId === graphqlRequestIds[0])).toMatchObject({
      level: 30,
      msg: 'GraphQL operation refused',
      reason: expect.stringMatching(/^The host localhost resolves to/),
    });
    expect(refusals.find((line) => line.requestId === graphqlRequestIds[1])).toMatchObject({
      level: 30,
      msg: 'GraphQL operation refused',
      reason: 'The host does-not-exist.invalid does not resolve',
    });
  });

  it('a signing secret that does not open with CREDENTIALS_KEY: rotate-secret answers 503 UNAVAILABLE with Retry-After on both doors and seals nothing', async () => {
    const { body: endpoint } = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC });
    secrets.push(endpoint.secret);
    const foreign = seal('whsec_' + randomBytes(32).toString('base64'), randomBytes(32));
    await app.sql('update webhook_endpoints set secret_encrypted = ? where id = ?', [foreign, endpoint.id]);
    const before = logs.length;
    const rest = await acme.rest.post(`/api/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(rest.body).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect(rest.body.detail).not.toMatch(/secret|whsec/);
    const graphql = await acme.graphql.run(RotateWebhookEndpointSecretDocument, { id: endpoint.id });
    expect(graphql.status).toBe(503);
    expect(graphql.errors?.[0]?.extensions.code).toBe('UNAVAILABLE');
    const [row] = await app.sql<{ secret_encrypted: string; previous_secret_encrypted: string | null }>(
      'select secret_encrypted, previous_secret_encrypted from webhook_endpoints where id = ?',
      [endpoint.id],
    );
    expect(row).toEqual({ secret_encrypted: foreign, previous_secret_encrypted: null });
    // The operator's log says what: a warn line per request naming the error, no stack.
    const warned = logs
      .slice(before)
      .map((line) => JSON.parse(line))
      .filter((line) => line.level === 40 && line.code === 'UNAVAILABLE');
    expect(warned).toHaveLength(2);
    expect(warned.every((line) => line.cause?.name === 'CredentialsError')).toBe(true);
  });

  it('answers 404 NOT_FOUND to another organization on every route, on both doors, and changes nothing', async () => {
    const { body: endpoint } = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC, description: 'mine' });
    secrets.push(endpoint.secret);
    const { body: theirs } = await other.rest.get('/api/events?limit=1');
    expect(theirs.data).toHaveLength(0);
    const id = endpoint.id as string;
    const rest: [string, string, unknown?][] = [
      ['get', `/api/webhook-endpoints/${id}`],
      ['put', `/api/webhook-endpoints/${id}`, { description: 'theirs now' }],
      ['delete', `/api/webhook-endpoints/${id}`],
      ['post', `/api/webhook-endpoints/${id}/rotate-secret`],
      ['get', `/api/webhook-endpoints/${id}/deliveries`],
      ['post', `/api/webhook-endpoints/${id}/deliveries`, { eventId: '00000000-0000-4000-8000-000000000000' }],
      ['post', `/api/webhook-endpoints/${id}/test`],
    ];
    for (const [method, path, body] of rest) {
      const res = await other.rest.request(method.toUpperCase(), path, body);
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    const graphql = [
      await other.graphql.run(WebhookEndpointDocument, { id }),
      await other.graphql.run(WebhookEndpointDeliveriesDocument, { id }),
      await other.graphql.run(UpdateWebhookEndpointDocument, { id, input: { description: 'theirs now' } }),
      await other.graphql.run(DeleteWebhookEndpointDocument, { id }),
      await other.graphql.run(RotateWebhookEndpointSecretDocument, { id }),
      await other.graphql.run(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: '00000000-0000-4000-8000-000000000000' } }),
      await other.graphql.run(TestWebhookEndpointDocument, { id }),
    ];
    for (const result of graphql) expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await acme.rest.get(`/api/webhook-endpoints/${id}`)).body).toMatchObject({ description: 'mine', secretHint: endpoint.secretHint });
    expect(await app.sql('select count(*)::int as n from webhook_deliveries where endpoint_id = ?', [id])).toEqual([{ n: 0 }]);

    // An event of another organization cannot be re-sent to one's own endpoint.
    await other.rest
      .post('/api/agents', { name: 'Theirs', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } })
      .then((agent) => other.rest.post(`/api/agents/${agent.body.id}/activate`));
    const [event] = (await other.rest.get('/api/events?limit=1')).body.data;
    const resend = await acme.rest.post(`/api/webhook-endpoints/${id}/deliveries`, { eventId: event.id });
    expect([resend.status, resend.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await acme.graphql.run(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: event.id } })).errors?.[0]?.extensions.code).toBe(
      'NOT_FOUND',
    );
  });

  it('shows a rotated secret once; the secrets are never in reads, rows in clear, or the log', async () => {
    const { body: endpoint } = await acme.rest.post('/api/webhook-endpoints', { url: PUBLIC });
    secrets.push(endpoint.secret);
    const rotated = await acme.graphql.ok(RotateWebhookEndpointSecretDocument, { id: endpoint.id });
    expect(rotated.rotateWebhookEndpointSecret.secret).not.toBe(endpoint.secret);
    expect(rotated.rotateWebhookEndpointSecret.previousSecretExpiresAt).not.toBeNull();
    secrets.push(rotated.rotateWebhookEndpointSecret.secret);

    const reads = [
      JSON.stringify((await acme.rest.get('/api/webhook-endpoints?limit=100')).body),
      JSON.stringify((await acme.rest.get(`/api/webhook-endpoints/${endpoint.id}`)).body),
      JSON.stringify(await acme.graphql.ok(WebhookEndpointsDocument, { limit: 100 })),
      JSON.stringify(await app.sql('select * from webhook_endpoints')),
    ];
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    for (const secret of secrets) {
      const key = secret.slice('whsec_'.length);
      for (const read of reads) expect(read.includes(key)).toBe(false);
      expect(logs.some((line) => line.includes(key))).toBe(false);
    }
    expect(logs.length).toBeGreaterThan(10); // the log was written (trace level), and holds none of them
  });

  it('holds at most 20 endpoints per organization: one more is a CONFLICT on both doors', async () => {
    const org = await app.organization('Many');
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) expect((await org.rest.post('/api/webhook-endpoints', { url: `${PUBLIC}/${i}` })).status).toBe(201);
    const rest = await org.rest.post('/api/webhook-endpoints', { url: `${PUBLIC}/one-more` });
    expect([rest.status, rest.body.code, rest.body.detail]).toEqual([
      409,
      'CONFLICT',
      'An organization may hold at most 20 webhook endpoints; delete one first',
    ]);
    expect((await org.graphql.run(CreateWebhookEndpointDocument, { input: { url: `${PUBLIC}/one-more` } })).errors?.[0]?.extensions.code).toBe('CONFLICT');
    expect((await org.rest.get('/api/webhook-endpoints')).body.meta.total).toBe(MAX_WEBHOOK_ENDPOINTS);
    // Another organization is not held back by this one's endpoints.
    expect((await other.rest.post('/api/webhook-endpoints', { url: PUBLIC })).status).toBe(201);
  });
});

describe('delivery', () => {
  // Deliveries end to end: a loopback receiver verifies every request with standardwebhooks' own
  // Webhook.verify; the worker is ticked by the test with a clock it moves.
  let app: TestApp;
  let org: TestOrganization;
  let receiver: WebhookReceiver;
  const HOUR = 3_600_000;

  beforeAll(async () => {
    app = await startWebhookApp();
    org = await app.organization('Hooks');
    await addCredits(org, 100);
  }, 60_000);
  afterAll(() => app?.close());
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    // Endpoints of a finished test are disabled so they get none of the next test's events.
    const { body } = await org.rest.get('/api/webhook-endpoints?limit=100');
    for (const endpoint of body.data) await org.rest.put(`/api/webhook-endpoints/${endpoint.id}`, { enabled: false });
    await receiver.close();
  });

  async function endpoint(body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
    const res = await org.rest.post('/api/webhook-endpoints', { url: `${receiver.url}/hooks`, ...body });
    expect(res.status).toBe(201);
    receiver.secrets = [...receiver.secrets, res.body.secret];
    return res.body;
  }

  async function deliveries(endpointId: string): Promise<any[]> {
    const res = await org.rest.get(`/api/webhook-endpoints/${endpointId}/deliveries?limit=100`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function activateAgent(): Promise<string> {
    const agent = await org.rest.post('/api/agents', { name: 'Hooked', instructions: 'Say hello.', modelConfig: { model: 'builtin/echo' } });
    expect(agent.status).toBe(201);
    expect((await org.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    return agent.body.id;
  }

  it('delivers every event of a campaign once, signed, to the endpoints subscribed to its type, and no other type', async () => {
    const clock = new TestClock();
    const some = await endpoint({ eventTypes: ['execution.started', 'execution.completed', 'call.ended'], description: 'some' });
    const all = await endpoint({ description: 'all' });
    const { programId } = await buildCampaign(org, 4, { retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    const executionId = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id as string;
    expect((await org.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
    const { runner } = buildRunner(app, { seed: 'webhooks', weights: ALWAYS_ANSWERED }, clock.now);
    await tickUntil(
      runner,
      () => readExecution(org, programId, executionId),
      (execution) => execution.status === 'completed',
    );
    await runner.stop();
    await activateAgent(); // written through the ORM's flush (EventWriter.stage), not raw SQL

    const webhooks = worker(app, clock);
    await drain(webhooks);
    const events = (await org.rest.get('/api/events?limit=100&sortOrder=asc')).body.data as { id: string; type: string; createdAt: string; payload: unknown }[];
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining(['execution.created', 'execution.started', 'call.started', 'call.ended', 'execution.completed', 'agent.activated']),
    );

    // Every request verified with its endpoint's secret; each webhook-id is the event's id, once per endpoint.
    const bySecret = (index: number) => receiver.received.filter((request) => request.verifiedWith.includes(index));
    expect(receiver.received.every((request) => request.verifiedWith.length === 1)).toBe(true);
    const subscribed = events.filter((event) => ['execution.started', 'execution.completed', 'call.ended'].includes(event.type));
    expect(
      bySecret(0)
        .map((request) => request.id)
        .sort(),
    ).toEqual(subscribed.map((event) => event.id).sort());
    expect(
      bySecret(1)
        .map((request) => request.id)
        .sort(),
    ).toEqual(events.map((event) => event.id).sort());
    expect(subscribed.filter((event) => event.type === 'call.ended')).toHaveLength(4);
    // The body is {type, timestamp, data}: data is the event's payload, timestamp its createdAt.
    for (const request of bySecret(1)) {
      const event = events.find((each) => each.id === request.id)!;
      expect(request.parsed).toEqual({ type: event.type, timestamp: event.createdAt, data: event.payload });
    }

    // Each delivery succeeded in one attempt, logged with its status and latency; both doors agree.
    const logged = await deliveries(some.id);
    expect(logged).toHaveLength(subscribed.length);
    expect(logged.every((delivery) => delivery.status === 'succeeded' && delivery.attemptCount === 1 && delivery.lastStatusCode === 204)).toBe(true);
    expect(logged[0].attempts).toEqual([{ attempt: 1, attemptedAt: expect.any(String), statusCode: 204, latencyMs: expect.any(Number), error: null }]);
    const graphql = await org.graphql.ok(WebhookEndpointDeliveriesDocument, { id: some.id, limit: 100 });
    expect(graphql.webhookEndpoint.deliveries).toEqual((await org.rest.get(`/api/webhook-endpoints/${some.id}/deliveries?limit=100`)).body);
    // Nested under a list of endpoints, one page each.
    const nested = await org.graphql.ok(WebhookEndpointsWithDeliveriesDocument);
    expect(nested.webhookEndpoints.data.find((each) => each.id === all.id)!.deliveries.meta.total).toBe(events.length);
  }, 120_000);

  it('retries a 500 after the backoff and records both attempts', async () => {
    const clock = new TestClock();
    receiver.answer = (n) => (n === 0 ? 500 : 200);
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    await activateAgent();
    const webhooks = worker(app, clock);
    expect(await drain(webhooks)).toBe(1);
    let [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: 500, lastError: 'The endpoint answered 500' });
    // Not due before the first wait (5 s) has passed.
    expect(await drain(webhooks)).toBe(0);
    clock.advance(6000);
    expect(await drain(webhooks)).toBe(1);
    [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 2, lastStatusCode: 200, lastError: null });
    expect(delivery.attempts.map((attempt: any) => [attempt.attempt, attempt.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    // The same webhook-id both times, so the receiver can dedupe; both verified.
    expect(receiver.received.map((request) => request.id)).toEqual([delivery.messageId, delivery.messageId]);
    expect(receiver.received.every((request) => request.verifiedWith.length === 1)).toBe(true);
  });

  it('holds back a delivery whose signing secret does not open with CREDENTIALS_KEY: no attempt counted, the endpoint not failing; it goes once the key opens it', async () => {
    const clock = new TestClock();
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    const [{ secret_encrypted: sealed }] = await app.sql<{ secret_encrypted: string }>('select secret_encrypted from webhook_endpoints where id = ?', [id]);
    await app.sql('update webhook_endpoints set secret_encrypted = ? where id = ?', [seal('whsec_' + randomBytes(32).toString('base64'), randomBytes(32)), id]);
    await activateAgent();
    const webhooks = worker(app, clock);
    // Many ticks over what would be days of retries: nothing is spent.
    for (const delay of [...RETRY_DELAYS_MS, 0]) {
      expect(await drain(webhooks)).toBe(0);
      clock.advance(Math.max(delay, 60_000));
    }
    let [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({
      status: 'pending',
      attemptCount: 0,
      lastError: expect.stringMatching(/^Held back: the signing secret does not open/),
      attempts: [],
    });
    const [state] = await app.sql<{ failing_since: unknown; enabled: boolean }>('select failing_since, enabled from webhook_endpoints where id = ?', [id]);
    expect(state).toEqual({ failing_since: null, enabled: true });
    expect(receiver.received).toHaveLength(0);

    await app.sql('update webhook_endpoints set secret_encrypted = ? where id = ?', [sealed, id]);
    clock.advance(60_000);
    expect(await drain(webhooks)).toBe(1);
    [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    expect(receiver.received).toHaveLength(1);
  });

  it('counts a receiver that hangs past WEBHOOK_TIMEOUT_MS as a failed attempt, and retries it', async () => {
    const clock = new TestClock();
    receiver.answer = (n) => (n === 0 ? 'hang' : 200);
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    await activateAgent();
    const webhooks = worker(app, clock, { timeoutMs: 300 });
    // lastError names the 300 ms limit: that timer ended the attempt.
    expect(await webhooks.tick()).toBe(1);
    let [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: null, lastError: 'No answer within 300 ms' });
    expect(delivery.attempts[0].latencyMs).toBeGreaterThanOrEqual(290);
    clock.advance(6000);
    expect(await drain(webhooks)).toBe(1);
    [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 2 });
  });

  it('disables the endpoint that answers 410, with the reason, and gives it no new deliveries', async () => {
    const clock = new TestClock();
    receiver.answer = () => 410;
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    await activateAgent();
    await drain(worker(app, clock));
    const read = (await org.rest.get(`/api/webhook-endpoints/${id}`)).body;
    expect(read).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^The endpoint answered 410 Gone/) });
    const [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'failed', attemptCount: 1, lastStatusCode: 410 });
    await activateAgent();
    expect(await deliveries(id)).toHaveLength(1);
    // A test event or a re-send to a disabled endpoint is a conflict, on both doors.
    expect((await org.rest.post(`/api/webhook-endpoints/${id}/test`)).body.code).toBe('CONFLICT');
    const graphql = await org.graphql.run(TestWebhookEndpointDocument, { id });
    expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
    // Enabled again: the reason is cleared and events flow again.
    expect((await org.rest.put(`/api/webhook-endpoints/${id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('gives a delivery up after the last attempt, and disables an endpoint whose every delivery failed for 5 days', async () => {
    const clock = new TestClock();
    receiver.answer = () => 503;
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    await activateAgent();
    const webhooks = worker(app, clock);
    // 12 attempts over about 2.8 days, then failed.
    for (let attempt = 0; attempt < 12; attempt++) {
      expect(await drain(webhooks)).toBe(1);
      clock.advance((RETRY_DELAYS_MS[attempt] ?? 0) + 1000);
    }
    let [first] = await deliveries(id);
    expect(first).toMatchObject({ status: 'failed', attemptCount: 12 });
    expect((await org.rest.get(`/api/webhook-endpoints/${id}`)).body.enabled).toBe(true);
    // Day 5 and more since the first failure, still nothing succeeded: the next failure disables it.
    clock.advance(5 * 24 * HOUR - RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay + 1000, 0));
    expect((await org.rest.post(`/api/webhook-endpoints/${id}/test`)).status).toBe(201);
    expect(await drain(webhooks)).toBe(1);
    const read = (await org.rest.get(`/api/webhook-endpoints/${id}`)).body;
    expect(read).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^Every delivery failed since .* \(5 days\)$/) });
    [first] = await deliveries(id);
    expect(first).toMatchObject({
      eventType: 'webhook.test',
      status: 'failed',
      attemptCount: 1,
      lastError: 'The endpoint was disabled before this delivery succeeded',
    });
  }, 60_000);

  it('signs with the old and the new secret for 24 hours after a rotation, then with the new one only', async () => {
    const clock = new TestClock();
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    const rotated = await org.rest.post(`/api/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.body.secretHint).toBe(rotated.body.secret.slice(-4));
    receiver.secrets = [...receiver.secrets, rotated.body.secret];
    const [oldIndex, newIndex] = [receiver.secrets.length - 2, receiver.secrets.length - 1];
    const webhooks = worker(app, clock);
    await activateAgent();
    await drain(webhooks);
    expect(receiver.received.at(-1)!.verifiedWith).toEqual([oldIndex, newIndex]);
    expect(receiver.received.at(-1)!.signature.split(' ')).toHaveLength(2);
    clock.advance(24 * HOUR + 60_000);
    await activateAgent();
    await drain(webhooks);
    expect(receiver.received.at(-1)!.verifiedWith).toEqual([newIndex]);
    expect(receiver.received).toHaveLength(2);
  });

  it('re-sends an event on demand and sends a test event to one endpoint only, on both doors', async () => {
    const clock = new TestClock();
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    const other = await endpoint();
    await activateAgent();
    const webhooks = worker(app, clock);
    await drain(webhooks);
    const [event] = (await org.rest.get('/api/events?type=agent.activated&limit=1')).body.data;
    receiver.received.length = 0;

    const rest = await org.rest.post(`/api/webhook-endpoints/${id}/deliveries`, { eventId: event.id });
    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({
      endpointId: id,
      eventId: event.id,
      messageId: event.id,
      eventType: 'agent.activated',
      manual: true,
      status: 'pending',
      attemptCount: 0,
      attempts: [],
    });
    const graphql = await org.graphql.ok(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: event.id } });
    expect(graphql.createWebhookDelivery).toMatchObject({ eventId: event.id, manual: true, status: 'pending' });
    await drain(webhooks);
    expect(receiver.received.map((request) => [request.id, request.verifiedWith])).toEqual([
      [event.id, [0 + receiver.secrets.length - 2]],
      [event.id, [receiver.secrets.length - 2]],
    ]);

    // Bad input: the same code on both doors.
    expect((await org.rest.post(`/api/webhook-endpoints/${id}/deliveries`, { eventId: 'nope' })).body.code).toBe('BAD_USER_INPUT');
    expect((await org.graphql.run(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: 'nope' } })).errors?.[0]?.extensions.code).toBe(
      'BAD_USER_INPUT',
    );

    receiver.received.length = 0;
    const test = await org.rest.post(`/api/webhook-endpoints/${id}/test`);
    expect(test.status).toBe(201);
    expect(test.body).toMatchObject({ eventType: 'webhook.test', eventId: null, manual: true });
    const testGraphql = await org.graphql.ok(TestWebhookEndpointDocument, { id });
    await drain(webhooks);
    expect(receiver.received.map((request) => request.parsed.type)).toEqual(['webhook.test', 'webhook.test']);
    expect(receiver.received.map((request) => request.id).sort()).toEqual([test.body.messageId, testGraphql.testWebhookEndpoint.messageId].sort());
    expect(receiver.received.every((request) => request.verifiedWith.length === 1 && request.parsed.data.endpointId === id)).toBe(true);
    // Not in the event stream, not sent to the endpoint subscribed to every type.
    expect((await org.rest.get('/api/events?search=webhook')).body.meta.total).toBe(0);
    expect((await deliveries(other.id)).some((delivery) => delivery.eventType === 'webhook.test')).toBe(false);
  });

  it('checks the address again when it delivers: a worker that may not reach private addresses refuses loopback', async () => {
    const clock = new TestClock();
    const { id } = await endpoint({ eventTypes: ['agent.activated'] });
    await activateAgent();
    expect(await drain(worker(app, clock, { allowPrivate: false }))).toBe(1);
    const [delivery] = await deliveries(id);
    expect(delivery).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: null, lastError: expect.stringMatching(/^Refused/) });
    expect(receiver.received).toHaveLength(0);
  });

  it('a name that resolves to a private address when it delivers shows the one generic refusal; the worker logs the address', async () => {
    const clock = new TestClock();
    const { id } = await endpoint({ eventTypes: ['agent.activated'], url: receiver.url.replace('http://127.0.0.1', 'https://localhost') + '/hooks' });
    await activateAgent();
    const lines: Record<string, unknown>[] = [];
    const webhooks = new WebhookWorker({
      em: app.db.database.em,
      credentialsKey: () => app.config.telephony.credentialsKey,
      allowPrivate: false,
      timeoutMs: 1000,
      clock: clock.now,
      random: () => 0.5,
      logger: createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) }),
    });
    expect(await drain(webhooks)).toBe(1);
    const [delivery] = await deliveries(id);
    expect(delivery.lastError).toBe('Refused: its host does not resolve, or resolves to a private, loopback, link-local or reserved address');
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 30, deliveryId: delivery.id, reason: expect.stringMatching(/^The host localhost resolves to (127\.0\.0\.1|::1)/) }),
    );
    expect(receiver.received).toHaveLength(0);
  });
});
