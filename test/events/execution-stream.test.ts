import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { buildCampaign } from '../campaigns/fixtures.js';

// GET /api/executions/{id}/stream: Server-Sent Events of the execution, what is kept then live,
// resumable with Last-Event-ID, heartbeats between; 404 for another organization's execution.
let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp({ live: { subscriptionsPerKey: 20, sseHeartbeatMs: 200 } });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  await acme.grantCredits(100);
}, 60_000);
afterAll(() => app?.close());

interface SseMessage {
  id?: string;
  event?: string;
  data?: unknown;
  comment?: string;
}

/** A plain fetch reader of an SSE answer: parses messages as they arrive. */
async function openStream(path: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(`${app.baseUrl}${path}`, { headers, signal: controller.signal });
  const messages: SseMessage[] = [];
  let buffer = '';
  const reading = (async () => {
    if (!res.body || res.status !== 200) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: SseMessage = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim();
            else if (line.startsWith('id: ')) message.id = line.slice(4);
            else if (line.startsWith('event: ')) message.event = line.slice(7);
            else if (line.startsWith('data: ')) message.data = JSON.parse(line.slice(6));
          }
          messages.push(message);
        }
      }
    } catch {
      // aborted
    }
  })();
  const events = () => messages.filter((message) => message.id !== undefined);
  return {
    res,
    messages,
    events,
    async until(done: (events: SseMessage[]) => boolean, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!done(events())) {
        if (Date.now() > deadline) throw new Error(`timed out with ${JSON.stringify(messages)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return events();
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

async function newExecution() {
  const { programId } = await buildCampaign(acme, 2, { retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 } });
  const created = await acme.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  return created.body.id as string;
}

it('streams the execution’s kept events, then live ones as they commit, with heartbeats between', async () => {
  const executionId = await newExecution();
  const stream = await openStream(`/api/executions/${executionId}/stream`, { 'x-api-key': acme.apiKey });
  expect(stream.res.status).toBe(200);
  expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(stream.res.headers.get('cache-control')).toBe('no-store');
  // What happened before the client came: execution.created.
  const first = await stream.until((events) => events.length >= 1);
  expect(first[0]).toMatchObject({ event: 'execution.created', data: { id: executionId, status: 'scheduled' } });

  expect((await acme.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  expect((await acme.rest.post(`/api/executions/${executionId}/pause`)).status).toBe(200);
  const events = await stream.until((got) => got.some((event) => event.event === 'execution.paused'));
  expect(events.map((event) => event.event)).toEqual(['execution.created', 'execution.started', 'execution.paused']);
  // The same events the events API answers, id for id.
  for (const event of events) {
    const stored = await acme.rest.get(`/api/events/${event.id}`);
    expect([stored.status, stored.body.type, stored.body.payload]).toEqual([200, event.event, event.data]);
  }
  await stream.until(() => stream.messages.some((message) => message.comment === 'heartbeat'), 3000);
  await stream.close();
}, 30_000);

it('resumes after Last-Event-ID: the events after that one, in order, then live, none twice', async () => {
  const executionId = await newExecution();
  expect((await acme.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
  expect((await acme.rest.post(`/api/executions/${executionId}/pause`)).status).toBe(200);
  const first = await openStream(`/api/executions/${executionId}/stream`, { 'x-api-key': acme.apiKey });
  const seen = await first.until((events) => events.length >= 3);
  await first.close();
  expect(seen.map((event) => event.event)).toEqual(['execution.created', 'execution.started', 'execution.paused']);

  // Disconnected after the first event: what came later is sent again, the first is not.
  const resumed = await openStream(`/api/executions/${executionId}/stream`, { 'x-api-key': acme.apiKey, 'last-event-id': seen[0]!.id! });
  expect((await acme.rest.post(`/api/executions/${executionId}/resume`)).status).toBe(200);
  const events = await resumed.until((got) => got.some((event) => event.event === 'execution.resumed'));
  await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more arrives after it
  expect(resumed.events().map((event) => event.id)).toEqual([seen[1]!.id, seen[2]!.id, events[2]!.id]);
  expect(resumed.events().map((event) => event.event)).toEqual(['execution.started', 'execution.paused', 'execution.resumed']);
  await resumed.close();

  // Resumed at the last event: only what is new.
  const latest = await openStream(`/api/executions/${executionId}/stream`, { 'x-api-key': acme.apiKey, 'last-event-id': events[2]!.id! });
  expect((await acme.rest.post(`/api/executions/${executionId}/stop`)).status).toBe(200);
  const tail = await latest.until((got) => got.length >= 1);
  expect(tail.map((event) => event.event)).toEqual(['execution.stopped']);
  await latest.close();
}, 30_000);

it('answers 404 for another organization’s execution, as the GET does, and 401 without credentials', async () => {
  const executionId = await newExecution();
  const theirs = await other.rest.get(`/api/executions/${executionId}/stream`);
  const get = await other.rest.get(`/api/executions/${executionId}`);
  expect([theirs.status, theirs.body.code]).toEqual([404, 'NOT_FOUND']);
  expect(get.status).toBe(404);
  expect((await other.rest.get('/api/executions/not-a-uuid/stream')).status).toBe(404);
  const anonymous = await app.rest().get(`/api/executions/${executionId}/stream`);
  expect(anonymous.status).toBe(401);
}, 30_000);

it('takes none of the organization’s concurrency places and outlives the request timeout', async () => {
  const slow = await startTestApp({ requestTimeoutMs: 300, concurrencyPerOrganization: 1, live: { subscriptionsPerKey: 20, sseHeartbeatMs: 100 } });
  try {
    const org = await slow.organization('Slow');
    await org.grantCredits(10);
    const { programId } = await buildCampaign(org, 1);
    const executionId = (await org.rest.post(`/api/programs/${programId}/executions`)).body.id as string;
    const res = await fetch(`${slow.baseUrl}/api/executions/${executionId}/stream`, { headers: { 'x-api-key': org.apiKey } });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 600));
    // Past the request timeout, with the one place of the organization free for its requests.
    expect((await org.rest.get(`/api/executions/${executionId}`)).status).toBe(200);
    expect((await org.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: execution.started')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('event: execution.created');
    await reader.cancel();
  } finally {
    await slow.close();
  }
}, 60_000);
