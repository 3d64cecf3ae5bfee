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
