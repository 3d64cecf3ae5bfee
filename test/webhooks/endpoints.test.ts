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
} from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { MAX_WEBHOOK_ENDPOINTS } from '../../src/modules/webhooks/webhook-endpoint.service.js';
import { startWebhookApp } from './fixtures.js';

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
    expect(rest.body.errors[0]).toEqual({ field: 'url', message: expect.stringMatching(/^url is refused: .*private, loopback, link-local or reserved address$/) });
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
  await other.rest.post('/api/agents', { name: 'Theirs', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } }).then((agent) => other.rest.post(`/api/agents/${agent.body.id}/activate`));
  const [event] = (await other.rest.get('/api/events?limit=1')).body.data;
  const resend = await acme.rest.post(`/api/webhook-endpoints/${id}/deliveries`, { eventId: event.id });
  expect([resend.status, resend.body.code]).toEqual([404, 'NOT_FOUND']);
  expect((await acme.graphql.run(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: event.id } })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
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
  expect([rest.status, rest.body.code, rest.body.detail]).toEqual([409, 'CONFLICT', 'An organization may hold at most 20 webhook endpoints; delete one first']);
  expect((await org.graphql.run(CreateWebhookEndpointDocument, { input: { url: `${PUBLIC}/one-more` } })).errors?.[0]?.extensions.code).toBe('CONFLICT');
  expect((await org.rest.get('/api/webhook-endpoints')).body.meta.total).toBe(MAX_WEBHOOK_ENDPOINTS);
  // Another organization is not held back by this one's endpoints.
  expect((await other.rest.post('/api/webhook-endpoints', { url: PUBLIC })).status).toBe(201);
});
