import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, readExecution, tickUntil } from '../campaigns/fixtures.js';
import {
  CallUpdatedDocument,
  ConversationMessageAddedDocument,
  ExecutionUpdatedDocument,
  ExecutionsUpdatedDocument,
  LiveEventsDocument,
  PauseExecutionDocument,
} from '../generated/graphql.js';
import { eventually, liveClient, type LiveClient } from './live-client.js';

// GraphQL subscriptions over graphql-ws on /graphql: each yields what the matching query returns,
// only to the subscriber's organization, under the HTTP door's limits, and a revoked key's socket closes.
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
const clients: LiveClient[] = [];

function connect(params: Record<string, unknown>): LiveClient {
  const client = liveClient(app.baseUrl, params);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  app = await startTestApp({ live: { subscriptionsPerKey: 3, sseHeartbeatMs: 15_000 }, jwtTtlSeconds: 2 });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  await addCredits(acme, 100);
}, 60_000);
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(() => app?.close());

async function newExecution(org: TestOrganization, contacts = 2) {
  const { programId } = await buildCampaign(org, contacts, { retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  return { programId, executionId: created.body.id as string };
}

it('executionUpdated yields the execution (with its program) each time it moves through REST or GraphQL', async () => {
  const { programId, executionId } = await newExecution(acme);
  const live = connect({ 'x-api-key': acme.apiKey });
  await live.connected;
  const updates = live.subscribe(ExecutionUpdatedDocument, { id: executionId });
  const all = live.subscribe(ExecutionsUpdatedDocument, { programId });
  await eventually(() => app.gateway.services.live.feed.size >= 2);

  expect((await acme.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  await acme.graphql.ok(PauseExecutionDocument, { id: executionId });
  const values = await updates.until((got) => got.some((value) => value.executionUpdated.status === 'paused'));
  expect(values.map((value) => value.executionUpdated.status)).toEqual(expect.arrayContaining(['running', 'paused']));
  const paused = values.find((value) => value.executionUpdated.status === 'paused')!.executionUpdated;
  expect(paused).toMatchObject({ id: executionId, program: { id: programId } });
  // The same object the query returns.
  const rest = (await acme.rest.get(`/api/executions/${executionId}`)).body;
  expect(paused.contactsPending).toBe(rest.contactsPending);

  // A second execution of the program shows up on executionsUpdated(programId), not on executionUpdated(id).
  const second = (await acme.rest.post(`/api/programs/${programId}/executions`)).body.id as string;
  const program = await all.until((got) => got.some((value) => value.executionsUpdated.id === second));
  expect(program.map((value) => value.executionsUpdated.id)).toEqual(expect.arrayContaining([executionId, second]));
  expect(updates.values.every((value) => value.executionUpdated.id === executionId)).toBe(true);
}, 60_000);

it('callUpdated yields each call of a campaign run by the runner, as it starts and ends', async () => {
  const { programId, executionId } = await newExecution(acme, 3);
  const live = connect({ 'x-api-key': acme.apiKey });
  const calls = live.subscribe(CallUpdatedDocument, { executionId });
  await eventually(() => app.gateway.services.live.feed.size >= 1);
  expect((await acme.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  const { runner } = buildRunner(app, { seed: `live-${executionId}`, weights: ALWAYS_ANSWERED });
  await tickUntil(runner, () => readExecution(acme, programId, executionId), (execution) => execution.status === 'completed');
  await runner.stop();
  const restCalls = (await acme.rest.get(`/api/calls?executionId=${executionId}&limit=100`)).body.data as { id: string; status: string }[];
  expect(restCalls).toHaveLength(3);
  // Two updates per call (started, ended), each the call as it is when read again: the last one of each is its final state.
  const values = await calls.until((got) => got.length >= 6);
  const last = new Map(values.map((value) => [value.callUpdated.id, value.callUpdated.status]));
  expect([...last.keys()].sort()).toEqual(restCalls.map((call) => call.id).sort());
  for (const call of restCalls) expect(last.get(call.id)).toBe(call.status);
  expect(values.every((value) => value.callUpdated.executionId === executionId)).toBe(true);
}, 60_000);

it('conversationMessageAdded yields the user message and the reply', async () => {
  const agent = await acme.rest.post('/api/agents', { name: 'Support', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
  const conversationId = (await acme.rest.post(`/api/agents/${agent.body.id}/conversations`, {})).body.id as string;
  const live = connect({ 'x-api-key': acme.apiKey });
  const messages = live.subscribe(ConversationMessageAddedDocument, { conversationId });
  await eventually(() => app.gateway.services.live.feed.size >= 1);
  expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'hello there' })).status).toBe(200);
  const values = await messages.until((got) => got.length >= 2);
  expect(values.map((value) => [value.conversationMessageAdded.sequence, value.conversationMessageAdded.role])).toEqual([
    [1, 'user'],
    [2, 'assistant'],
  ]);
  expect(values[0]!.conversationMessageAdded.content).toBe('hello there');
}, 30_000);

it('events(types) yields only the types asked for, and another organization’s subscriber sees nothing of it', async () => {
  const mine = connect({ 'x-api-key': acme.apiKey });
  const theirs = connect({ 'x-api-key': other.apiKey });
  const started = mine.subscribe(LiveEventsDocument, { types: ['execution.started'] });
  const everything = theirs.subscribe(LiveEventsDocument, {});
  await eventually(() => app.gateway.services.live.feed.size >= 2);

  const { executionId } = await newExecution(acme);
  expect((await acme.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  const values = await started.until((got) => got.length >= 1);
  expect(values.map((value) => [value.events.type, value.events.payload.id, value.events.organizationId])).toEqual([
    ['execution.started', executionId, acme.organizationId],
  ]);

  // The other organization's own change reaches it, and nothing of Acme's ever did.
  const agent = await other.rest.post('/api/agents', { name: 'Theirs', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
  expect((await other.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  const seen = await everything.until((got) => got.some((value) => value.events.type === 'agent.activated'));
  expect(seen.every((value) => value.events.organizationId === other.organizationId)).toBe(true);
  expect(started.values).toHaveLength(1);
}, 60_000);

it('another organization’s id is NOT_FOUND on subscribe, as the queries answer, and never data', async () => {
  const { programId, executionId } = await newExecution(acme);
  const agent = await acme.rest.post('/api/agents', { name: 'Private', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
  const conversationId = (await acme.rest.post(`/api/agents/${agent.body.id}/conversations`, {})).body.id as string;
  const live = connect({ 'x-api-key': other.apiKey });
  const attempts = [
    () => live.subscribe(ExecutionUpdatedDocument, { id: executionId }),
    () => live.subscribe(ExecutionsUpdatedDocument, { programId }),
    () => live.subscribe(CallUpdatedDocument, { executionId }),
    () => live.subscribe(ConversationMessageAddedDocument, { conversationId }),
    () => live.subscribe(ExecutionUpdatedDocument, { id: 'not-a-uuid' }),
  ];
  for (const subscribe of attempts) {
    const attempt = subscribe();
    const errors = await attempt.ended();
    expect(errors.map((error) => error.extensions?.code)).toEqual(['NOT_FOUND']);
    expect(attempt.values).toEqual([]);
  }
  expect((await other.rest.get(`/api/executions/${executionId}`)).status).toBe(404);
  expect(app.gateway.services.live.feed.size).toBe(0);
}, 30_000);

it('an unknown event type is BAD_USER_INPUT naming it, the same code as GET /api/events?type=bogus', async () => {
  const rest = await acme.rest.get('/api/events?type=bogus');
  expect(rest.status).toBe(400);
  const live = connect({ 'x-api-key': acme.apiKey });
  const errors = await live.subscribe(LiveEventsDocument, { types: ['execution.started', 'bogus'] }).ended();
  expect(errors.map((error) => error.extensions?.code)).toEqual([rest.body.code]);
  expect(errors[0]!.extensions?.errors).toEqual([{ field: 'types', message: expect.stringContaining('type must be one of') }]);
}, 30_000);

it('holds subscription documents to the HTTP door’s depth and cost limits (same codes), and carries subscriptions only', async () => {
  const deep = (kind: 'query' | 'subscription') => {
    const nest = (depth: number): string => (depth === 0 ? 'id' : `program { executions { ${nest(depth - 1)} } }`);
    return kind === 'query'
      ? `query Deep($id: ID!) { execution(id: $id) { ${nest(6)} } }`
      : `subscription Deep($id: ID!) { executionUpdated(id: $id) { ${nest(6)} } }`;
  };
  const { executionId } = await newExecution(acme);
  const http = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
    body: JSON.stringify({ query: deep('query'), variables: { id: executionId } }),
  });
  const httpBody = (await http.json()) as { errors: { extensions: { code: string } }[] };
  expect(httpBody.errors.length).toBeGreaterThan(0);
  const live = connect({ 'x-api-key': acme.apiKey });
  await live.connected;
  const refusal = await new Promise<unknown>((resolve) => {
    live.client.subscribe({ query: deep('subscription'), variables: { id: executionId } }, { next: resolve, error: resolve, complete: () => resolve('complete') });
  });
  expect(Array.isArray(refusal)).toBe(true);
  const codes = (refusal as { extensions: { code: string }; message: string }[]).map((error) => error.extensions.code);
  expect(codes).toEqual(httpBody.errors.map((error) => error.extensions.code));
  expect((refusal as { message: string }[])[0]!.message).toMatch(/depth/i);

  // The cost limit too: a selection that may answer 100 × 100 rows is refused before anything is read.
  const costly = (kind: 'query' | 'subscription') =>
    `${kind} Costly($id: ID!) { ${kind === 'query' ? 'execution' : 'executionUpdated'}(id: $id) { calls(limit: 100) { data { conversation { messages(limit: 100) { data { id content } } } } } } }`;
  const httpCost = (await (
    await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: costly('query'), variables: { id: executionId } }),
    })
  ).json()) as { errors: { message: string; extensions: { code: string } }[] };
  expect(httpCost.errors[0]!.message).toMatch(/would cost/);
  const costRefusal = (await new Promise<unknown>((resolve) => {
    live.client.subscribe({ query: costly('subscription'), variables: { id: executionId } }, { next: resolve, error: resolve, complete: () => resolve('complete') });
  })) as { message: string; extensions: { code: string } }[];
  expect(costRefusal.map((error) => error.extensions.code)).toEqual(httpCost.errors.map((error) => error.extensions.code));
  expect(costRefusal[0]!.message).toMatch(/would cost/);

  // A query over the socket is refused: queries and mutations go over HTTP, under its rate limits.
  const query = await new Promise<unknown>((resolve) => {
    live.client.subscribe({ query: '{ me { id } }' }, { next: resolve, error: resolve, complete: () => resolve('complete') });
  });
  expect((query as { extensions: { code: string } }[])[0]!.extensions.code).toBe('BAD_USER_INPUT');
}, 30_000);

it('refuses the subscription past SUBSCRIPTIONS_PER_KEY for that key, and takes one again once one completes', async () => {
  const { executionId } = await newExecution(acme);
  const live = connect({ 'x-api-key': acme.apiKey });
  const open = [1, 2, 3].map(() => live.subscribe(ExecutionUpdatedDocument, { id: executionId }));
  await eventually(() => app.gateway.services.live.feed.size === 3);
  const refused = live.subscribe(ExecutionUpdatedDocument, { id: executionId });
  const errors = await refused.ended();
  expect(errors.map((error) => error.extensions?.code)).toEqual(['RATE_LIMITED']);
  expect(errors[0]!.message).toMatch(/SUBSCRIPTIONS_PER_KEY/);
  // Another key of the organization has places of its own.
  const key = await acme.rest.post('/api/auth/api-keys', { name: 'second', prefix: 'sk_' });
  const second = connect({ 'x-api-key': key.body.secret });
  const theirs = second.subscribe(ExecutionUpdatedDocument, { id: executionId });
  await eventually(() => app.gateway.services.live.feed.size === 4);
  expect(theirs.errors).toEqual([]);
  // One completes: the key may subscribe again.
  open[0]!.dispose();
  await eventually(() => app.gateway.services.live.feed.size === 3);
  const again = live.subscribe(ExecutionUpdatedDocument, { id: executionId });
  await eventually(() => app.gateway.services.live.feed.size === 4);
  expect(again.errors).toEqual([]);
}, 30_000);

it('closes the socket (4403) within about a second when its key is deactivated, or deleted', async () => {
  for (const revoke of ['deactivate', 'delete'] as const) {
    const key = await acme.rest.post('/api/auth/api-keys', { name: `revoked-${revoke}`, prefix: 'rk_' });
    expect(key.status).toBe(201);
    const live = connect({ 'x-api-key': key.body.secret });
    await live.connected;
    const events = live.subscribe(LiveEventsDocument, {});
    await eventually(() => app.gateway.services.live.feed.size >= 1);
    const revoked = Date.now();
    const res =
      revoke === 'deactivate'
        ? await acme.rest.put(`/api/auth/api-keys/${key.body.id}`, { isActive: false })
        : await acme.rest.delete(`/api/auth/api-keys/${key.body.id}`);
    expect(res.status).toBe(200);
    const closed = await live.closed;
    expect(closed.code).toBe(4403);
    expect(closed.reason).toMatch(/deactivated, deleted or expired/);
    expect(Date.now() - revoked).toBeLessThan(2500);
    expect(events.values).toEqual([]);
    await eventually(() => app.gateway.services.live.feed.size === 0);
  }
}, 30_000);

it('a bearer token authenticates in connection_init and its socket closes (4403) once it expires; no or bad credentials close the socket with 4401', async () => {
  const token = (await acme.rest.post('/api/auth/token')).body.accessToken as string;
  const issued = Date.now();
  const bearer = connect({ authorization: `Bearer ${token}` });
  await bearer.connected;
  // The token lives 2 s here (JWT_TTL_SECONDS): its socket closes once it has expired.
  const expired = await bearer.closed;
  expect(expired).toEqual({ code: 4403, reason: 'The bearer token expired' });
  expect(Date.now() - issued).toBeGreaterThanOrEqual(1000);
  expect(Date.now() - issued).toBeLessThan(4500);
  const none = connect({});
  expect((await none.closed).code).toBe(4401);
  const bad = connect({ 'x-api-key': 'tag_not-a-key-at-all-0000000000000000' });
  const closed = await bad.closed;
  expect(closed.code).toBe(4401);
  expect(closed.reason).toMatch(/unknown, inactive or expired/);
}, 30_000);
