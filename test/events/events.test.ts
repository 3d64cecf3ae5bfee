import { EventDocument, EventsDocument, type EventsQueryVariables } from '../generated/graphql.js';
import { createLogger } from '../../src/common/logger.js';
import { EventWriter } from '../../src/modules/events/event-writer.js';
import { ExecutionEvents } from '../../src/modules/programs/execution-events.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { eventRetentionHook } from '../../src/modules/events/event-retention.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { FLOW } from '../telephony/fixtures.js';
import { addCredits, ALWAYS_ANSWERED, buildCampaign, buildRunner, clock, readExecution, tickUntil } from '../campaigns/fixtures.js';

// Events: the events API, campaign events and the execution stream, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('events-api', () => {
  // The events API over rows the doors' own changes wrote: agents activated and archived,
  // conversation messages, a document chunked; filters, paging and errors the same on both doors.
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let agentId: string;
  let conversationId: string;

  /** The REST query string of GraphQL variables; a list repeats its parameter. */
  function query(variables: Record<string, unknown>): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(variables)) {
      for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
    }
    return params.size > 0 ? `?${params}` : '';
  }

  /** Both doors with the same arguments: the same page, or the same error. */
  async function both(org: TestOrganization, variables: Record<string, unknown>) {
    const rest = await org.rest.get(`/api/events${query(variables)}`);
    const graphql = await org.graphql.run(EventsDocument, variables as EventsQueryVariables);
    if (rest.status === 200) {
      expect(graphql.errors).toBeUndefined();
      expect(graphql.data!.events).toEqual(rest.body);
    }
    return { rest, graphql };
  }

  async function events(org: TestOrganization, variables: Record<string, unknown> = {}): Promise<{ id: string; type: string; createdAt: string; payload: Record<string, any> }[]> {
    const { rest } = await both(org, { limit: 100, ...variables });
    expect(rest.status).toBe(200);
    return rest.body.data;
  }

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    const agent = await acme.rest.post('/api/agents', { name: 'Support', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    agentId = agent.body.id;
    expect((await acme.rest.post(`/api/agents/${agentId}/activate`)).status).toBe(200);
    conversationId = (await acme.rest.post(`/api/agents/${agentId}/conversations`, {})).body.id;
    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'hello there' })).status).toBe(200);
    expect((await acme.rest.post(`/api/conversations/${conversationId}/end`)).status).toBe(200);
    expect((await acme.rest.delete(`/api/agents/${agentId}`)).status).toBe(200);
    // A change of the other organization, so "sees none of them" is not true of an empty outbox.
    const theirs = await other.rest.post('/api/agents', { name: 'Theirs', instructions: 'Help.', modelConfig: { model: 'builtin/echo' } });
    expect((await other.rest.post(`/api/agents/${theirs.body.id}/activate`)).status).toBe(200);
  }, 120_000);
  afterAll(() => app?.close());

  describe('events written by the doors’ changes', () => {
    it('agent activated and archived, the agent as it was after the change', async () => {
      const list = await events(acme, { type: ['agent.activated', 'agent.archived'], sortOrder: 'asc' });
      expect(list.map((event) => event.type)).toEqual(['agent.activated', 'agent.archived']);
      expect(list[0]!.payload).toMatchObject({ id: agentId, organizationId: acme.organizationId, status: 'active', deletedAt: null });
      expect(list[1]!.payload).toMatchObject({ id: agentId, status: 'archived' });
      expect(list[1]!.payload.deletedAt).toEqual(expect.any(String));
      expect(JSON.stringify(list)).not.toContain('Help.'); // no instructions
    });

    it('one conversation.message per stored message, in order, then conversation.ended with the outcome', async () => {
      const list = await events(acme, { type: ['conversation.message', 'conversation.ended'], sortOrder: 'asc' });
      // REST also takes the types separated by commas.
      expect((await acme.rest.get('/api/events?type=conversation.message,conversation.ended&sortOrder=asc')).body.data).toEqual(list);
      expect(list.map((event) => event.type)).toEqual(['conversation.message', 'conversation.message', 'conversation.ended']);
      expect(list.slice(0, 2).map((event) => [event.payload.conversationId, event.payload.agentId, event.payload.sequence, event.payload.role])).toEqual([
        [conversationId, agentId, 1, 'user'],
        [conversationId, agentId, 2, 'assistant'],
      ]);
      expect(list[0]!.payload.content).toBe('hello there');
      const messages = (await acme.rest.get(`/api/conversations/${conversationId}/messages`)).body;
      const stored = (messages.data ?? messages) as { id: string }[];
      expect(list.slice(0, 2).map((event) => event.payload.id).sort()).toEqual(stored.map((message) => message.id).sort());
      expect(list[2]!.payload).toMatchObject({ id: conversationId, status: 'ended', outcome: [] });
    });

    it('a document stored and chunked: knowledge.document.ready', async () => {
      const base = (await acme.rest.post('/api/knowledge-bases', { name: 'Docs' })).body;
      const document = (await acme.rest.post(`/api/knowledge-bases/${base.id}/documents`, { title: 'Hours', content: 'We open at nine.' })).body;
      const [event] = await events(acme, { type: 'knowledge.document.ready' });
      expect(event!.payload).toMatchObject({ id: document.id, knowledgeBaseId: base.id, status: 'ready', chunkCount: 1 });
      expect(JSON.stringify(event)).not.toContain('We open at nine.');
    });

    it('a document that cannot be chunked: knowledge.document.failed with the error', async () => {
      const base = (await acme.rest.post('/api/knowledge-bases', { name: 'Blank' })).body;
      const stored = await acme.rest.post(`/api/knowledge-bases/${base.id}/documents`, { title: 'Blank', content: ' \n\t ' });
      expect(stored.body.status).toBe('failed');
      const [event] = await events(acme, { type: 'knowledge.document.failed' });
      expect(event!.payload).toMatchObject({ id: stored.body.id, knowledgeBaseId: base.id, status: 'failed', chunkCount: 0, error: stored.body.error });
    });
  });

  describe('GET /api/events and events(...)', () => {
    it('answers {data, meta} newest first, the same on both doors, and pages', async () => {
      const all = await events(acme);
      expect(all.length).toBeGreaterThanOrEqual(5);
      const times = all.map((event) => event.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      const { rest } = await both(acme, { page: 2, limit: 2 });
      expect(rest.body.data.map((event: { id: string }) => event.id)).toEqual(all.slice(2, 4).map((event) => event.id));
      expect(rest.body.meta).toEqual({ page: 2, limit: 2, total: all.length, totalPages: Math.ceil(all.length / 2), hasNextPage: all.length > 4, hasPreviousPage: true });
      for (const event of rest.body.data) expect(Object.keys(event).sort()).toEqual(['createdAt', 'id', 'organizationId', 'payload', 'type']);
    });

    it('filters by createdAfter (inclusive) and createdBefore (exclusive)', async () => {
      const all = await events(acme, { sortOrder: 'asc' });
      const middle = all[2]!;
      expect((await events(acme, { createdAfter: middle.createdAt, sortOrder: 'asc' })).map((event) => event.id)).toEqual(
        all.filter((event) => event.createdAt >= middle.createdAt).map((event) => event.id),
      );
      expect((await events(acme, { createdBefore: middle.createdAt, sortOrder: 'asc' })).map((event) => event.id)).toEqual(
        all.filter((event) => event.createdAt < middle.createdAt).map((event) => event.id),
      );
    });

    it.each([
      ['an unknown type', { type: 'agent.exploded' }, 'type'],
      ['an unknown type among known ones', { type: ['agent.activated', 'nope'] }, 'type'],
      ['a date that is not ISO 8601', { createdAfter: 'yesterday' }, 'createdAfter'],
      ['a range that ends before it starts', { createdAfter: '2026-11-02T00:00:00Z', createdBefore: '2026-11-01T00:00:00Z' }, 'createdBefore'],
      ['limit 101', { limit: 101 }, 'limit'],
      ['a sortBy off the allow-list', { sortBy: 'type' }, 'sortBy'],
    ])('%s: 400 BAD_USER_INPUT on both doors', async (_label, variables, field) => {
      const { rest, graphql } = await both(acme, variables);
      expect([rest.status, rest.body.code]).toEqual([400, 'BAD_USER_INPUT']);
      expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['BAD_USER_INPUT']);
      expect(JSON.stringify(rest.body)).toContain(field);
      expect(JSON.stringify(graphql.errors)).toContain(field);
    });

    it('another organization sees none of them, and gets 404 for one on both doors', async () => {
      const mine = await events(acme);
      const theirs = await events(other);
      expect(theirs.map((event) => event.type)).toEqual(['agent.activated']);
      expect(theirs.some((event) => mine.some((own) => own.id === event.id))).toBe(false);
      const id = mine[0]!.id;
      const own = await acme.rest.get(`/api/events/${id}`);
      expect(own.status).toBe(200);
      expect(own.body).toEqual(mine[0]);
      expect((await acme.graphql.ok(EventDocument, { id })).event).toEqual(mine[0]);
      const rest = await other.rest.get(`/api/events/${id}`);
      expect([rest.status, rest.body.code]).toEqual([404, 'NOT_FOUND']);
      const graphql = await other.graphql.run(EventDocument, { id });
      expect(graphql.errors?.map((error) => error.extensions.code)).toEqual(['NOT_FOUND']);
      expect((await acme.rest.get('/api/events/not-a-uuid')).status).toBe(404);
    });
  });

  describe('the outbox', () => {
    it('an execution move whose transaction fails writes no event, and the move does not happen either', async () => {
      const audience = await createAudience(acme, 1);
      const flow = await acme.rest.post('/api/call-flows', FLOW);
      const program = await acme.rest.post('/api/programs', { name: 'Rollback', kind: 'campaign', flowId: flow.body.id, audienceId: audience.id });
      expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
      const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
      const before = await events(acme, { type: 'execution.started' });
      const em = app.db.database.em.fork();
      await expect(
        em.transactional(async (outer) => {
          await new ExecutionEvents().transaction(outer, async (tx, record) => {
            await tx.execute(`update executions set status = 'running' where id = ?`, [execution.id]);
            record({ executionId: execution.id, programId: program.body.id, organizationId: acme.organizationId, from: 'scheduled' as never, to: 'running' as never, reason: 'user' });
          });
          throw new Error('the change failed after its event was written');
        }),
      ).rejects.toThrow('the change failed');
      expect(await events(acme, { type: 'execution.started' })).toEqual(before);
      expect((await acme.rest.get(`/api/executions/${execution.id}`)).body.status).toBe('scheduled');
      // A move committed writes its event, with the execution as REST shows it after the move.
      await new ExecutionEvents().transaction(app.db.database.em.fork(), async (tx, record) => {
        await tx.execute(`update executions set status = 'cancelled' where id = ?`, [execution.id]);
        record({ executionId: execution.id, programId: program.body.id, organizationId: acme.organizationId, from: 'scheduled' as never, to: 'cancelled' as never, reason: 'user' });
      });
      const [cancelled] = await events(acme, { type: 'execution.cancelled' });
      expect(cancelled!.payload).toMatchObject({ id: execution.id, status: 'cancelled', from: 'scheduled', to: 'cancelled', reason: 'user' });
    });

    it('an event written through a transaction that rolls back is gone with it', async () => {
      const before = (await events(acme)).length;
      await expect(
        app.db.database.em.fork().transactional(async (tx) => {
          await EventWriter.write(tx, { organizationId: acme.organizationId, type: 'agent.activated', payload: { id: 'x' } });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await events(acme)).length).toBe(before);
    });
  });

  describe('retention', () => {
    it('the runner’s tick deletes events older than EVENTS_RETENTION_DAYS, by its clock, and keeps the rest', async () => {
      expect(app.config.eventsRetentionDays).toBe(30);
      await app.sql(`insert into events (id, organization_id, type, created_at, payload) values (gen_random_uuid(), ?, 'agent.activated', now() - interval '40 days', '{"old":true}')`, [acme.organizationId]);
      const before = await events(acme);
      expect(before.some((event) => event.payload.old === true)).toBe(true);
      let now = new Date();
      const runner = new CampaignRunner({ em: app.db.database.em, dialer: new SimulatedDialer({ seed: 'retention' }), logger: createLogger('silent'), clock: () => now });
      runner.onTick.push(eventRetentionHook(app.gateway.services.events, app.config.eventsRetentionDays));
      await runner.tick();
      const kept = await events(acme);
      expect(kept.map((event) => event.id)).toEqual(before.filter((event) => event.payload.old !== true).map((event) => event.id));
      // 31 days on, every event of today is past retention too.
      now = new Date(Date.now() + 31 * 24 * 3_600_000);
      await runner.tick();
      expect(await events(acme)).toEqual([]);
      expect(await events(other)).toEqual([]);
    });
  });
});

describe('campaign-events', () => {
  // A campaign run by the runner writes its execution's story to the outbox: created, started,
  // completed with their reasons, progress coalesced to one a second (by the runner's clock), and
  // one call.started and one call.ended per call, each shaped as REST shows the resource.
  let app: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.organization('Acme');
    await addCredits(org, 100);
  }, 60_000);
  afterAll(() => app?.close());

  type Event = { id: string; type: string; createdAt: string; payload: Record<string, any> };

  async function eventsOf(executionId: string): Promise<Event[]> {
    const res = await org.rest.get('/api/events?limit=100&sortOrder=asc');
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBeLessThanOrEqual(100);
    return (res.body.data as Event[]).filter((event) => (event.type.startsWith('execution.') ? event.payload.id : event.payload.executionId) === executionId);
  }

  async function run(settings: Record<string, unknown>, contacts: number, now: () => Date, advance: () => void = () => {}) {
    const { programId } = await buildCampaign(org, contacts, { retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 }, ...settings });
    const created = await org.rest.post(`/api/programs/${programId}/executions`);
    const executionId = created.body.id as string;
    expect((await org.rest.post(`/api/executions/${executionId}/start`)).status).toBe(200);
    const { runner } = buildRunner(app, { seed: `events-${executionId}`, weights: ALWAYS_ANSWERED }, now);
    const done = await tickUntil(runner, () => readExecution(org, programId, executionId), (execution) => execution.status === 'completed', advance);
    await runner.stop();
    return { executionId, done };
  }

  it('writes created, started and completed with their reasons, one progress event while the clock stands still, and one call.started and call.ended per call', async () => {
    const pinned = clock();
    const { executionId, done } = await run({ maxConcurrentCalls: 3 }, 6, () => pinned);
    const events = await eventsOf(executionId);

    const moves = events.filter((event) => event.type.startsWith('execution.') && event.type !== 'execution.progress');
    expect(moves.map((event) => [event.type, event.payload.from, event.payload.to, event.payload.reason])).toEqual([
      ['execution.created', null, 'scheduled', 'user'],
      ['execution.started', 'scheduled', 'running', 'user'],
      ['execution.completed', 'running', 'completed', 'no_contacts_left'],
    ]);
    // The execution as REST shows it after each move.
    expect(moves[2]!.payload).toMatchObject({ ...done, status: 'completed', contactsCompleted: 6, contactsPending: 0, contactsInProgress: 0 });
    const rest = (await org.rest.get(`/api/executions/${executionId}`)).body;
    expect(Object.keys(moves[2]!.payload).sort()).toEqual([...Object.keys(rest), 'from', 'to', 'reason'].sort());

    // Six calls recorded at one instant of the runner's clock: one progress event, with the counters of the
    // first recorded batch (calls that end together are recorded together: 1 to 3 of the 3 concurrent calls).
    const progress = events.filter((event) => event.type === 'execution.progress');
    expect(progress).toHaveLength(1);
    const first = progress[0]!.payload;
    expect(first).toMatchObject({ id: executionId });
    expect(first.contactsCompleted).toBeGreaterThanOrEqual(1);
    expect(first.contactsCompleted).toBeLessThanOrEqual(3);
    expect(first.contactsCompleted + first.contactsFailed + first.contactsPending + first.contactsInProgress).toBe(6);

    const calls = (await org.rest.get(`/api/calls?executionId=${executionId}&limit=100`)).body.data as Record<string, unknown>[];
    expect(calls).toHaveLength(6);
    const ended = events.filter((event) => event.type === 'call.ended');
    const started = events.filter((event) => event.type === 'call.started');
    expect(ended.map((event) => event.payload.id).sort()).toEqual(calls.map((call) => call.id).sort());
    expect(started.map((event) => event.payload.id).sort()).toEqual(calls.map((call) => call.id).sort());
    for (const event of ended) {
      const call = calls.find((each) => each.id === event.payload.id)!;
      expect(Object.keys(event.payload).sort()).toEqual(Object.keys(call).sort()); // jsonb keeps keys in its own order
      expect(event.payload).toMatchObject({ status: call.status, outcome: call.outcome, endedAt: call.endedAt, durationSeconds: call.durationSeconds });
    }
    expect(started.every((event) => event.payload.status === 'in_progress' && event.payload.endedAt === null)).toBe(true);
    // Each call starts before it ends; the execution completes after its last call ended.
    for (const event of ended) expect(started.find((each) => each.payload.id === event.payload.id)!.createdAt <= event.createdAt).toBe(true);
    expect(ended.every((event) => event.createdAt <= moves[2]!.createdAt)).toBe(true);
  }, 60_000);

  it('writes a progress event for every call when each is recorded more than a second after the last', async () => {
    let now = clock();
    const { executionId } = await run({ maxConcurrentCalls: 1 }, 3, () => now, () => {
      now = new Date(now.getTime() + 1500);
    });
    const progress = (await eventsOf(executionId)).filter((event) => event.type === 'execution.progress');
    expect(progress.map((event) => event.payload.contactsCompleted)).toEqual([1, 2, 3]);
  }, 60_000);
});

describe('execution-stream', () => {
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
});
