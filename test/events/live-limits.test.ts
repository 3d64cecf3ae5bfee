import { RequestContext } from '@mikro-orm/core';
import type { ExecutionResult } from 'graphql';
import WebSocket from 'ws';
import type { Actor } from '../../src/common/actor.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { addCredits, buildCampaign } from '../campaigns/fixtures.js';
import { eventually, liveClients, type LiveClient } from './live-client.js';

// The WebSocket door held to the HTTP door's limits: each subscription event's answer to RESPONSE_MAX_BYTES
// (and weighed by the organization gate), sockets to LIVE_CONNECTIONS_PER_KEY / _PER_ORG, and failed
// connection_init messages to RATE_LIMIT_ANONYMOUS_PER_MINUTE per client IP.

/** Everything one subscription received, data and errors alike, and how it ended. */
function collect(live: LiveClient, query: string, variables: Record<string, unknown>) {
  const results: ExecutionResult[] = [];
  let ended: unknown;
  const dispose = live.client.subscribe(
    { query, variables },
    {
      next: (result) => void results.push(result as ExecutionResult),
      error: (error) => void (ended = error),
      complete: () => void (ended = 'complete'),
    },
  );
  return {
    results,
    dispose,
    get ended() {
      return ended;
    },
  };
}

/** Answers within `ms` whether the promise settled (a socket's close, for instance). */
async function settles(promise: Promise<unknown>, ms = 300): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

/** The promise's value, or a failure naming `what` once `ms` have passed. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

describe('subscription answers', () => {
  const MAX_BYTES = 9000;
  let app: TestApp;
  let acme: TestOrganization;
  let actor: Actor;
  const { connect, closeAll } = liveClients(() => app.baseUrl);

  beforeAll(async () => {
    app = await startTestApp({ responseMaxBytes: MAX_BYTES });
    acme = await app.organization('Acme');
    await addCredits(acme, 100);
    actor = (await RequestContext.create(app.db.database.orm.em, () => app.gateway.services.auth.authenticate({ apiKey: acme.apiKey })))!;
  }, 60_000);
  afterEach(() => closeAll());
  afterAll(() => app?.close());

  /** Moves an execution the service's way (no HTTP request, so the organization gate weighs only the event). */
  function control(executionId: string, action: 'start' | 'pause' | 'resume') {
    return RequestContext.create(app.db.database.orm.em, () => app.gateway.services.executions.control(actor, executionId, action));
  }

  it('an event over RESPONSE_MAX_BYTES is the HTTP door’s refusal of the same selection, with no data; the organization is weighed and the stream stays open', async () => {
    // An agent with one conversation of two large messages (5000 and 5006 characters): each alone is within the budget, both are not.
    const agent = await acme.rest.post('/api/agents', { name: 'Talker', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    const conversationId = (await acme.rest.post(`/api/agents/${agent.body.id}/conversations`, {})).body.id as string;
    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'x'.repeat(5000) })).status).toBe(200);
    const { programId } = await buildCampaign(acme, 1, { flowId: undefined, agentId: agent.body.id, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
    const executionId = (await acme.rest.post(`/api/programs/${programId}/executions`)).body.id as string;

    const selection = '{ id status program { agent { conversations(limit: 100) { data { messages(limit: 10) { data { content } } } } } } }';
    const live = connect({ 'x-api-key': acme.apiKey });
    const updates = collect(live, `subscription Big($id: ID!) { executionUpdated(id: $id) ${selection} }`, { id: executionId });
    await eventually(() => app.gateway.services.live.feed.size >= 1);
    // The execution as it is comes first, refused the same way; the organization is weighed after it.
    const gate = app.gateway.gate;
    await eventually(() => updates.results.length >= 1 && gate.load(acme.organizationId).running === 0);
    expect(updates.results[0]!.errors!.map((each) => each.extensions?.code)).toEqual(['BAD_USER_INPUT']);

    const before = gate.averageAnswerBytes(acme.organizationId);
    await control(executionId, 'start');
    await eventually(() => updates.results.length >= 2);
    const refused = updates.results[1];
    expect(refused).not.toHaveProperty('data');
    expect(refused!.errors).toHaveLength(1);
    const error = refused!.errors![0]!;
    expect(error.message).toMatch(new RegExp(`^The answer would be at least \\d+ bytes, over the limit of ${MAX_BYTES}`));
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', requestId: expect.any(String) });
    // The event took one of the organization's places and gave it back, weighed with the bytes it had built.
    await eventually(() => gate.load(acme.organizationId).running === 0);
    const charged = Number(/at least (\d+) bytes/.exec(error.message)![1]);
    expect(charged).toBeGreaterThan(MAX_BYTES);
    expect(gate.averageAnswerBytes(acme.organizationId)).toBeCloseTo(before + 0.2 * (charged - before), 6);

    // The same selection over HTTP is refused with the same message and code.
    const http = await fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
      body: JSON.stringify({ query: `query Big($id: ID!) { execution(id: $id) ${selection} }`, variables: { id: executionId } }),
    });
    const httpBody = (await http.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(http.status).toBe(400);
    expect(httpBody.errors.map((each) => [each.message, each.extensions.code])).toEqual([[error.message, error.extensions!.code]]);

    // The subscription is still open: the next move is refused the same way, not the end of the stream.
    await control(executionId, 'pause');
    await eventually(() => updates.results.length >= 3);
    expect(updates.results[2]!.errors!.map((each) => each.message)).toEqual([error.message]);
    expect(updates.ended).toBeUndefined();
  }, 60_000);

  it('an event the budget did not see is refused by its serialized size, and the next event within the limit arrives', async () => {
    // An event's payload is not charged as it is built (it is not a LARGE_VALUE field): only its size, once built, is over the limit.
    const agent = await acme.rest.post('/api/agents', { name: 'Payloads', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    const conversationId = (await acme.rest.post(`/api/agents/${agent.body.id}/conversations`, {})).body.id as string;
    const live = connect({ 'x-api-key': acme.apiKey });
    const events = collect(live, 'subscription Twice { events(types: ["conversation.message"]) { type a: payload b: payload } }', {});
    await eventually(() => app.gateway.services.live.feed.size >= 1);

    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'y'.repeat(5000) })).status).toBe(200);
    await eventually(() => events.results.length >= 2);
    for (const result of events.results.slice(0, 2)) {
      expect(result).not.toHaveProperty('data');
      expect(result.errors!.map((each) => [each.message, each.extensions?.code])).toEqual([
        [expect.stringMatching(new RegExp(`^The answer would be \\d+ bytes, over the limit of ${MAX_BYTES}`)), 'BAD_USER_INPUT'],
      ]);
    }

    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'small' })).status).toBe(200);
    await eventually(() => events.results.length >= 4);
    const delivered = events.results.slice(2) as { data: { events: { type: string; a: { content: string } } } }[];
    expect(delivered.map((result) => [result.data.events.type, result.data.events.a.content])).toEqual([
      ['conversation.message', 'small'],
      ['conversation.message', 'Echo: small'],
    ]);
    expect(events.ended).toBeUndefined();
  }, 60_000);
});

describe('live sockets', () => {
  const PER_KEY = 3;
  const PER_ORG = 4;
  const ANONYMOUS = 5;
  let app: TestApp;
  let acme: TestOrganization;
  const { connect, closeAll } = liveClients(() => app.baseUrl);

  beforeAll(async () => {
    app = await startTestApp({
      live: {
        subscriptionsPerKey: 20,
        connectionsPerKey: PER_KEY,
        connectionsPerOrganization: PER_ORG,
        sseHeartbeatMs: 15_000,
        sseMaxBufferedBytes: 1024 * 1024,
      },
      rateLimit: { perMinute: 0, anonymousPerMinute: ANONYMOUS, organizationPerMinute: 0 },
      // The tests' own connections come from loopback: X-Forwarded-For is believed from there only.
      trustProxy: 'loopback',
    });
    acme = await app.organization('Acme');
  }, 60_000);
  afterAll(async () => {
    await closeAll();
    await app?.close();
  });

  it('refuses the socket past LIVE_CONNECTIONS_PER_KEY (4429) while the others stay open, and takes one again once one closes', async () => {
    const open = [1, 2, 3].map(() => connect({ 'x-api-key': acme.apiKey }));
    await Promise.all(open.map((client) => client.connected));
    const refused = connect({ 'x-api-key': acme.apiKey });
    const closed = await within(refused.closed, 'the refused socket did not close');
    expect(closed.code).toBe(4429);
    expect(closed.reason).toMatch(/LIVE_CONNECTIONS_PER_KEY/);
    for (const client of open) expect(await settles(client.closed)).toBe(false);
    expect(app.gateway.services.live.connections.count({ organizationId: acme.organizationId }).organization).toBe(PER_KEY);

    await open.pop()!.close();
    await eventually(() => app.gateway.services.live.connections.count({ organizationId: acme.organizationId }).organization === PER_KEY - 1);
    const again = connect({ 'x-api-key': acme.apiKey });
    await again.connected;
    open.push(again);
    expect(await settles(again.closed)).toBe(false);
  }, 30_000);

  it('refuses a second key of the organization past LIVE_CONNECTIONS_PER_ORG (4429)', async () => {
    // The first test left PER_KEY sockets open on the first key.
    const key = await acme.rest.post('/api/auth/api-keys', { name: 'second', prefix: 'sk_' });
    const first = connect({ 'x-api-key': key.body.secret });
    await first.connected;
    const refused = connect({ 'x-api-key': key.body.secret });
    const closed = await within(refused.closed, 'the refused socket did not close');
    expect(closed.code).toBe(4429);
    expect(closed.reason).toMatch(/LIVE_CONNECTIONS_PER_ORG/);
    expect(await settles(first.closed)).toBe(false);
    expect(app.gateway.services.live.connections.count({ organizationId: acme.organizationId }).organization).toBe(PER_ORG);
  }, 30_000);

  it('counts by the address the HTTP door counts (req.ip, with TRUST_PROXY): X-Forwarded-For from a trusted proxy', async () => {
    const url = `${app.baseUrl.replace(/^http/, 'ws')}/graphql`;
    /** A socket from `ip` whose connection_init has a wrong key: its close code, or the HTTP status its upgrade was refused with. */
    const failFrom = (ip: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws', { headers: { 'x-forwarded-for': ip } });
        socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': 'tag_wrong' } })));
        socket.once('close', (code) => resolve(code));
        socket.once('unexpected-response', (_req, res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        socket.once('error', () => undefined);
      });
    for (let i = 0; i < ANONYMOUS; i++) expect(await failFrom('203.0.113.7')).toBe(4401);
    expect(await failFrom('203.0.113.7')).toBe(429);
    // Another address has a count of its own; and the HTTP door refuses the spent one too.
    expect(await failFrom('203.0.113.8')).toBe(4401);
    expect((await app.rest({ 'x-forwarded-for': '203.0.113.7' }).get('/api/users/me')).status).toBe(429);
    expect((await app.rest({ 'x-forwarded-for': '203.0.113.9' }).get('/api/users/me')).status).toBe(401);
  }, 30_000);

  it('counts failed connection_init messages against the client IP, and the upgrades still being decided: a burst past RATE_LIMIT_ANONYMOUS_PER_MINUTE is answered 429 at the upgrade', async () => {
    const url = `${app.baseUrl.replace(/^http/, 'ws')}/graphql`;
    /** An upgrade from loopback (this test's own address): the open socket, or the refused upgrade's answer. */
    const upgrade = () =>
      new Promise<{ socket?: WebSocket; status?: number; retryAfter?: string; body?: string }>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws');
        socket.once('open', () => resolve({ socket }));
        socket.once('error', () => undefined);
        socket.once('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body }));
        });
      });
    // ANONYMOUS + 3 upgrades at once, none authenticated yet: each open one holds a place until its
    // connection_init is decided, so the burst cannot pass the limit by arriving together.
    const burst = await Promise.all(Array.from({ length: ANONYMOUS + 3 }, upgrade));
    const sockets = burst.flatMap((each) => (each.socket ? [each.socket] : []));
    expect(sockets).toHaveLength(ANONYMOUS);
    for (const refused of burst.filter((each) => !each.socket)) {
      expect([refused.status, refused.retryAfter, JSON.parse(refused.body!).code]).toEqual([429, '1', 'RATE_LIMITED']);
    }

    // An anonymous HTTP request from the same address counts in the same window: the last socket's failure passes the limit.
    expect((await app.rest().get('/api/users/me')).status).toBe(401);
    const closes: { code: number; reason: string }[] = [];
    for (const socket of sockets) {
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
      );
      socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': 'tag_not-a-key-at-all-0000000000000000' } }));
      closes.push(await closed);
    }
    expect(closes.slice(0, ANONYMOUS - 1).map((close) => close.code)).toEqual(Array(ANONYMOUS - 1).fill(4401));
    expect(closes[ANONYMOUS - 1]!.code).toBe(4429);
    expect(closes[ANONYMOUS - 1]!.reason).toMatch(/RATE_LIMIT_ANONYMOUS_PER_MINUTE/);

    // Now the upgrade itself is refused before any WebSocket is opened, as HTTP answers such a client.
    const answer = await upgrade();
    expect(answer.status).toBe(429);
    expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(answer.body!)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    // The HTTP door counts the same window: an anonymous request from this IP is refused too.
    expect((await app.rest().get('/api/users/me')).status).toBe(429);
  }, 30_000);
});

describe('live connections across both doors', () => {
  const PER_KEY = 2;
  let app: TestApp;
  let acme: TestOrganization;
  const { connect, closeAll } = liveClients(() => app.baseUrl);
  const streams: AbortController[] = [];

  beforeAll(async () => {
    app = await startTestApp({
      live: { subscriptionsPerKey: 20, connectionsPerKey: PER_KEY, connectionsPerOrganization: 50, sseHeartbeatMs: 15_000, sseMaxBufferedBytes: 1024 * 1024 },
    });
    acme = await app.organization('Acme');
  }, 60_000);
  afterAll(async () => {
    for (const stream of streams.splice(0)) stream.abort();
    await closeAll();
    await app?.close();
  });

  /** GET /api/executions/{id}/stream: its status, the stream kept open until the test ends. */
  async function openStream(executionId: string): Promise<number> {
    const controller = new AbortController();
    streams.push(controller);
    const res = await fetch(`${app.baseUrl}/api/executions/${executionId}/stream`, { headers: { 'x-api-key': acme.apiKey }, signal: controller.signal });
    if (res.status !== 200) await res.body?.cancel();
    return res.status;
  }

  it('a socket and an SSE stream of one key share LIVE_CONNECTIONS_PER_KEY: past it the next stream is 429 and the next socket closes 4429', async () => {
    const { programId } = await buildCampaign(acme, 1);
    const executionId = (await acme.rest.post(`/api/programs/${programId}/executions`)).body.id as string;
    const socket = connect({ 'x-api-key': acme.apiKey });
    await socket.connected;
    expect(await openStream(executionId)).toBe(200);
    expect(app.gateway.services.live.connections.count({ organizationId: acme.organizationId }).organization).toBe(PER_KEY);

    expect(await openStream(executionId)).toBe(429);
    const refused = connect({ 'x-api-key': acme.apiKey });
    const closed = await within(refused.closed, 'the refused socket did not close');
    expect(closed.code).toBe(4429);
    expect(closed.reason).toMatch(/LIVE_CONNECTIONS_PER_KEY/);

    // Closing the socket frees a place the SSE door can take.
    await socket.close();
    await eventually(() => app.gateway.services.live.connections.count({ organizationId: acme.organizationId }).organization === PER_KEY - 1);
    expect(await openStream(executionId)).toBe(200);
  }, 30_000);
});
