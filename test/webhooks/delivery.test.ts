import { ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, readExecution, tickUntil } from '../campaigns/fixtures.js';
import { CreateWebhookDeliveryDocument, TestWebhookEndpointDocument, WebhookEndpointDeliveriesDocument, WebhookEndpointsWithDeliveriesDocument } from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { RETRY_DELAYS_MS } from '../../src/modules/webhooks/webhook-schedule.js';
import { drain, startWebhookApp, TestClock, worker } from './fixtures.js';
import { WebhookReceiver } from './receiver.js';

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
  await tickUntil(runner, () => readExecution(org, programId, executionId), (execution) => execution.status === 'completed');
  await runner.stop();
  await activateAgent(); // written through the ORM's flush (EventWriter.stage), not raw SQL

  const webhooks = worker(app, clock);
  await drain(webhooks);
  const events = (await org.rest.get('/api/events?limit=100&sortOrder=asc')).body.data as { id: string; type: string; createdAt: string; payload: unknown }[];
  expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['execution.created', 'execution.started', 'call.started', 'call.ended', 'execution.completed', 'agent.activated']));

  // Every request verified with its endpoint's secret; each webhook-id is the event's id, once per endpoint.
  const bySecret = (index: number) => receiver.received.filter((request) => request.verifiedWith.includes(index));
  expect(receiver.received.every((request) => request.verifiedWith.length === 1)).toBe(true);
  const subscribed = events.filter((event) => ['execution.started', 'execution.completed', 'call.ended'].includes(event.type));
  expect(bySecret(0).map((request) => request.id).sort()).toEqual(subscribed.map((event) => event.id).sort());
  expect(bySecret(1).map((request) => request.id).sort()).toEqual(events.map((event) => event.id).sort());
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
  expect(delivery.attempts.map((attempt: any) => [attempt.attempt, attempt.statusCode])).toEqual([[1, 500], [2, 200]]);
  // The same webhook-id both times, so the receiver can dedupe; both verified.
  expect(receiver.received.map((request) => request.id)).toEqual([delivery.messageId, delivery.messageId]);
  expect(receiver.received.every((request) => request.verifiedWith.length === 1)).toBe(true);
});

it('counts a receiver that hangs past WEBHOOK_TIMEOUT_MS as a failed attempt, and retries it', async () => {
  const clock = new TestClock();
  receiver.answer = (n) => (n === 0 ? 'hang' : 200);
  const { id } = await endpoint({ eventTypes: ['agent.activated'] });
  await activateAgent();
  const webhooks = worker(app, clock, { timeoutMs: 300 });
  const started = Date.now();
  expect(await webhooks.tick()).toBe(1);
  expect(Date.now() - started).toBeLessThan(5000);
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
  expect(first).toMatchObject({ eventType: 'webhook.test', status: 'failed', attemptCount: 1, lastError: 'The endpoint was disabled before this delivery succeeded' });
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
  expect(rest.body).toMatchObject({ endpointId: id, eventId: event.id, messageId: event.id, eventType: 'agent.activated', manual: true, status: 'pending', attemptCount: 0, attempts: [] });
  const graphql = await org.graphql.ok(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: event.id } });
  expect(graphql.createWebhookDelivery).toMatchObject({ eventId: event.id, manual: true, status: 'pending' });
  await drain(webhooks);
  expect(receiver.received.map((request) => [request.id, request.verifiedWith])).toEqual([[event.id, [0 + receiver.secrets.length - 2]], [event.id, [receiver.secrets.length - 2]]]);

  // Bad input: the same code on both doors.
  expect((await org.rest.post(`/api/webhook-endpoints/${id}/deliveries`, { eventId: 'nope' })).body.code).toBe('BAD_USER_INPUT');
  expect((await org.graphql.run(CreateWebhookDeliveryDocument, { endpointId: id, input: { eventId: 'nope' } })).errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');

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
