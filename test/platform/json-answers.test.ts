import { randomBytes, randomUUID } from 'node:crypto';
import { type FakeTwilio, startFakeTwilio } from '../support/fake-twilio.js';
import { RequestContext } from '@mikro-orm/core';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { getNamedType, isObjectType, parse, type GraphQLObjectType } from 'graphql';
import { answeredByDatabase } from '../../src/graphql/sql-answers.js';
import type { Actor } from '../../src/common/actor.js';
import { parseInput } from '../../src/common/validation.js';
import { gatewaySchema, REST_ROUTES } from '../../src/doors.js';
import { AgentListArgs } from '../../src/modules/agents/agent.args.js';
import { Agent } from '../../src/modules/agents/agent.entity.js';
import { Execution } from '../../src/modules/programs/execution.entity.js';
import { PageOnlyArgs } from '../../src/common/pagination.js';
import { EXECUTION_FIELDS, executionJson } from '../../src/modules/programs/programs.types.js';
import { Presenter } from '../../src/rest/present.js';
import { CallFlow } from '../../src/modules/programs/call-flow.entity.js';
import { DoNotCallEntry } from '../../src/modules/contacts/do-not-call.entity.js';
import { BusinessEntity } from '../../src/modules/contacts/business-entity.entity.js';
import { Contact } from '../../src/modules/contacts/contact.entity.js';
import { KnowledgeBase } from '../../src/modules/knowledge/knowledge-base.entity.js';
import { CreditLedgerEntry } from '../../src/modules/organizations/credit-ledger.entity.js';
import { Event } from '../../src/modules/events/event.entity.js';
import { CarrierConnection } from '../../src/modules/telephony/carrier-connection.entity.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAgent, createConfiguredAgent, TRICKY } from '../helpers/tricky-agents.js';
import { activeCampaign, flowInput } from '../programs/fixtures.js';

// The REST lists whose answers PostgreSQL writes as JSON (src/rest/present-sql.ts): the agents page
// and a program's executions. Each answer must be the JSON the JS presenter makes of the same rows
// (the read path's read objects, shaped by the GraphQL type's fields, or executionJson), and the same
// fields as GraphQL answers them, for rows that hold the values where the two could part: texts with
// quotes, backslashes, control characters, emoji and line separators; JSON columns with nested
// objects, floats, large integers, keys in any order, nulls, missing keys and JSON null; timestamps
// with microseconds (truncated to milliseconds, as pg's parsing does) and nulls; empty and set
// policies; outcome counts with keys missing. Another organization sees none of it (404 for a
// program it does not own, on both doors), and both doors refuse the same bad input alike.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let programId: string;
let presenter: Presenter;
let twilio: FakeTwilio;

function actorOf(org: TestOrganization): Actor {
  return { userId: org.userId, organizationId: org.organizationId, roles: ['owner'] as Actor['roles'], via: 'api-key', apiKeyId: randomUUID() };
}

/** The JSON the JS path makes of the same page (what REST answered before the database wrote it). */
async function inProcess<T>(run: () => Promise<T>): Promise<unknown> {
  const value = await RequestContext.create(app.db.database.orm.em, run);
  return JSON.parse(JSON.stringify(value));
}

beforeAll(async () => {
  twilio = await startFakeTwilio();
  app = await startTestApp({ telephony: { twilioApiBaseUrl: twilio.url, credentialsKey: randomBytes(32), publicUrl: 'https://gateway.example.test' } });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  presenter = new Presenter(await gatewaySchema());

  await createAgent(acme, { name: 'Plain' });
  await createConfiguredAgent(app, acme);
  const edge = await createAgent(acme, { name: 'Edge' });
  // Values no input makes, written as a migration or an older version could have left them.
  await app.sql(
    `update agents set policy = '', description = null, voice_config = 'null'::jsonb, memory_config = '{"extra": 1, "enabled": false, "lastMessages": 5}'::jsonb,
       metadata = '{"b": 1.0, "a": [], "c": {"z": null, "y": "\\u00e9"}, "num": 1e21}'::jsonb,
       knowledge_base_config = '{"knowledgeBaseId": "9b2f7c1e-0d4a-4c35-9a51-0e7f6d1c2b3a", "topK": 3, "similarityThreshold": 0.25}'::jsonb,
       resolution_criteria = '[{"zeta": 1, "label": "second key first", "description": ""}, {"description": "extra key", "extra": true, "label": "l"}]'::jsonb,
       analysis_plan = '{"summary": true}'::jsonb,
       tool_ids = '["5d0c1f0e-7a4b-4e8e-9b1a-3c2d1e0f9a8b"]'::jsonb,
       mcp_tools = '[{"names": ["lookup_order", "refund"], "extra": 1, "serverId": "0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b"}]'::jsonb,
       model_config = '{"model": "builtin/echo", "unknownKey": 1}'::jsonb,
       created_at = '2026-01-02 03:04:05.999999+00', updated_at = '1999-12-31 23:59:59.000001+00',
       deleted_at = '2026-06-30 12:00:00.123456+00'
     where id = ?`,
    [edge],
  );
  await createAgent(acme, { name: 'Archived' }).then((id) => acme.rest.delete(`/api/agents/${id}`));
  await createAgent(other, { name: 'Other’s agent', description: 'not Acme’s' });

  const campaign = await activeCampaign(acme, 1);
  programId = campaign.programId;
  const insert = (values: string) =>
    app.sql(
      `insert into executions (id, created_at, updated_at, organization_id, program_id, audience_id, flow_id, status, total_contacts, contacts_completed,
         contacts_failed, contacts_pending, contacts_in_progress, contacts_do_not_call, auto_pause_rules, outcome_counts, node_counts, credits_spent,
         scheduled_start_at, actual_start_at, actual_end_at)
       values ${values}`,
      [randomUUID(), acme.organizationId, programId, campaign.audienceId, campaign.flowId, randomUUID(), acme.organizationId, programId],
    );
  await insert(
    `(?, '2026-03-01 10:00:00.000500+00', now(), ?, ?, ?, ?, 'completed', 10, 7, 1, 0, 0, 2,
      '[{"nodeId": "n1", "threshold": 3, "resetOnResume": true}, {"extra": "x", "threshold": 1, "resetOnResume": false, "nodeId": "n2"}]'::jsonb,
      '{"answered": 5, "voicemail": 1, "no_answer": 1, "opted_out": 1, "contact_deleted": 1}'::jsonb, '{}'::jsonb, 42,
      '2026-03-01 09:00:00+00', '2026-03-01 10:00:00.999+00', '2026-03-01 11:00:00.1+00'),
     (?, '2026-03-02 10:00:00+00', now(), ?, ?, null, null, 'scheduled', 0, 0, 0, 0, 0, 0, '[]'::jsonb, '{}'::jsonb, '{}'::jsonb, 0, null, null, null)`,
  );
  // What the runner found (waitingReason, nextCallAt): kept for a running execution, ignored once another status says why (or nothing does).
  await app.sql(
    `insert into executions (id, created_at, updated_at, organization_id, program_id, status, total_contacts, contacts_pending, auto_pause_rules, outcome_counts,
       node_counts, scheduled_start_at, runner_waiting_reason, runner_next_call_at)
     values (?, '2026-02-27 10:00:00+00', now(), ?, ?, 'running', 0, 0, '[]'::jsonb, '{}'::jsonb, '{}'::jsonb, '2026-02-27 09:00:00+00', 'outside_calling_window', '2026-02-28 08:00:00.123456+00'),
            (?, '2026-02-26 10:00:00+00', now(), ?, ?, 'paused_threshold', 0, 0, '[]'::jsonb, '{}'::jsonb, '{}'::jsonb, null, 'retry_wait', '2026-02-28 08:00:00+00'),
            (?, '2026-02-25 10:00:00+00', now(), ?, ?, 'stopped', 0, 0, '[]'::jsonb, '{}'::jsonb, '{}'::jsonb, null, 'concurrency_limit', null)`,
    [randomUUID(), acme.organizationId, programId, randomUUID(), acme.organizationId, programId, randomUUID(), acme.organizationId, programId],
  );
}, 60_000);
afterAll(async () => {
  await app?.close();
  await twilio?.close();
});

const AGENT_FIELDS =
  'id createdAt updatedAt name description instructions status version modelConfig { model modelSettings providerOptions } ' +
  'voiceConfig { pipelineMode voiceId stsProvider sttProvider sttModel ttsProvider ttsModel language ' +
  'interruptions { mode minWords minSpeechMs ignore } turnDetection { type eagerness silenceMs } } ' +
  'memoryConfig { enabled lastMessages semanticRecall } metadata knowledgeBaseConfig resolutionCriteria { label description } ' +
  'analysisPlan { summary structuredData } toolIds mcpTools { serverId names } transferDestinations { name number description mode briefing } createdBy deletedAt organizationId hasPolicy firstMessage firstMessageMode variables { name default description }';

describe('the agents page, written as JSON by the database', () => {
  it.each([
    ['limit=20', { limit: '20' }],
    ['two per page, page 2', { limit: '2', page: '2' }],
    ['archived', { status: 'archived' }],
    ['a search over the tricky description', { search: 'backslash' }],
    ['sorted by name ascending', { sortBy: 'name', sortOrder: 'asc' }],
    ['past the end', { page: '9', limit: '5' }],
  ] as [string, Record<string, string>][])('%s: the JS presenter’s JSON of the same rows, and GraphQL’s', async (_name, params) => {
    const res = await acme.rest.get(`/api/agents?${new URLSearchParams(params)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const args = await parseInput(AgentListArgs, params, 'query');
    const expected = await inProcess(async () => presenter.present('AgentPage', await app.gateway.services.agents.list(actorOf(acme), args)));
    expect(res.body).toEqual(expected);
    // Strictly: the same keys in the same order, numbers and nulls alike (toEqual lets undefined pass for missing).
    expect(JSON.stringify(res.body)).toBe(JSON.stringify(expected));
    const names = (res.body.data as { name: string }[]).map((agent) => agent.name);
    expect(names).not.toContain('Other’s agent');

    const graphql = await acme.graphql.run(
      parse(`query($limit: Int, $page: Int, $status: AgentStatus, $search: String) {
        agents(limit: $limit, page: $page, status: $status, search: $search${params.sortBy ? ', sortBy: "name", sortOrder: asc' : ''}) {
          data { ${AGENT_FIELDS} } meta { page limit total totalPages hasNextPage hasPreviousPage nextCursor prevCursor lastCursor } } }`) as TypedDocumentNode<
        Record<string, any>,
        Record<string, unknown>
      >,
      { limit: args.limit, page: args.page, status: args.status ?? null, search: args.search ?? null },
    );
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data!.agents).toEqual(res.body);
  });

  it('the rows hold what the test is about (so the comparisons above compare something)', async () => {
    const res = await acme.rest.get('/api/agents?limit=20');
    const byName = Object.fromEntries((res.body.data as Record<string, any>[]).map((agent) => [agent.name, agent]));
    expect(Object.keys(byName).sort()).toEqual(['Configured', 'Edge', 'Plain']);
    expect(byName.Configured.description).toBe(TRICKY);
    expect(byName.Configured.hasPolicy).toBe(true);
    expect(byName.Configured).not.toHaveProperty('policy');
    expect(JSON.stringify(res.body)).not.toContain('discount code');
    expect(byName.Configured.metadata.big).toBe(12345678901234);
    expect(byName.Edge.createdAt).toBe('2026-01-02T03:04:05.999Z');
    expect(byName.Edge.updatedAt).toBe('1999-12-31T23:59:59.000Z');
    expect(byName.Edge.hasPolicy).toBe(false);
    expect(byName.Edge.voiceConfig).toBeNull();
    expect(byName.Edge.resolutionCriteria).toEqual([
      { label: 'second key first', description: '' },
      { label: 'l', description: 'extra key' },
    ]);
    expect(byName.Edge.memoryConfig).toEqual({ enabled: false, lastMessages: 5, semanticRecall: null });
    expect(byName.Edge.modelConfig).toEqual({ model: 'builtin/echo', modelSettings: null, providerOptions: null });
    expect(byName.Edge.toolIds).toEqual(['5d0c1f0e-7a4b-4e8e-9b1a-3c2d1e0f9a8b']);
    expect(byName.Edge.mcpTools).toEqual([{ serverId: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b', names: ['lookup_order', 'refund'] }]);
    expect(byName.Plain).toMatchObject({ toolIds: [], mcpTools: [] });
  });

  it('another organization’s page holds only its own agent', async () => {
    const res = await other.rest.get('/api/agents?limit=20');
    expect(res.status).toBe(200);
    expect((res.body.data as { name: string }[]).map((agent) => agent.name)).toEqual(['Other’s agent']);
  });

  it('the same bad input gets the same error on REST and GraphQL', async () => {
    const rest = await acme.rest.get('/api/agents?limit=0');
    expect(rest.status).toBe(400);
    const graphql = await acme.graphql.run(
      parse('query { agents(limit: 0) { data { id } } }') as TypedDocumentNode<Record<string, any>, Record<string, never>>,
    );
    expect(graphql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.message).toBe(rest.body.detail ?? rest.body.message);
  });
});

describe('a program’s executions, written as JSON by the database', () => {
  it.each([
    ['the whole list', {}],
    ['one per page, page 2', { limit: '1', page: '2' }],
  ])('%s: executionJson of the same rows, and GraphQL’s fields', async (_name, params) => {
    const res = await acme.rest.get(`/api/programs/${programId}/executions?${new URLSearchParams(params)}`);
    expect(res.status).toBe(200);
    const args = await parseInput(PageOnlyArgs, params, 'query');
    const expected = await inProcess(async () =>
      (await app.gateway.services.executions.listForProgram(actorOf(acme), programId, args)).data.map(executionJson),
    );
    expect(JSON.stringify(res.body)).toBe(JSON.stringify(expected));
    expect(res.headers.get('x-total-count')).toBe('5');
    for (const execution of res.body as Record<string, unknown>[]) expect(Object.keys(execution)).toEqual([...EXECUTION_FIELDS]);
  });

  it('the rows hold what the test is about', async () => {
    const res = await acme.rest.get(`/api/programs/${programId}/executions`);
    const [newer, older] = res.body as Record<string, any>[];
    expect(newer.autoPauseRules).toEqual([]);
    expect(newer.actualStartAt).toBeNull();
    expect(older.createdAt).toBe('2026-03-01T10:00:00.000Z');
    expect(older.actualStartAt).toBe('2026-03-01T10:00:00.999Z');
    expect(older.autoPauseRules).toEqual([
      { nodeId: 'n1', threshold: 3, resetOnResume: true },
      { nodeId: 'n2', threshold: 1, resetOnResume: false },
    ]);
    expect(older.outcomes).toEqual({ answered: 5, voicemail: 1, voicemailLeft: 0, noAnswer: 1, busy: 0, failed: 0, doNotCall: 0, notCalled: 2 });
    const waiting = (res.body as Record<string, any>[]).map((execution) => [execution.status, execution.waitingReason, execution.nextCallAt]);
    expect(waiting).toEqual([
      ['scheduled', 'scheduled', null],
      ['completed', null, null],
      ['running', 'outside_calling_window', '2026-02-28T08:00:00.123Z'],
      ['paused_threshold', 'paused_by_rule', null],
      ['stopped', null, null],
    ]);
  });

  it('another organization gets 404 on both doors, and an empty program’s page is []', async () => {
    const rest = await other.rest.get(`/api/programs/${programId}/executions`);
    expect(rest.status).toBe(404);
    const graphql = await other.graphql.run(
      parse(`query { program(id: "${programId}") { id } }`) as TypedDocumentNode<Record<string, any>, Record<string, never>>,
    );
    expect(graphql.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const empty = await activeCampaign(acme, 1);
    const list = await acme.rest.get(`/api/programs/${empty.programId}/executions`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    expect(list.headers.get('x-total-count')).toBe('0');
  });

  it('the database writes every field of an execution REST shows, so the JS path is not what answered', () => {
    // Were a field not compiled, the route would fall back to executionJson and this file would compare the JS path with itself.
    const sql = new Presenter(presenter['schema'], app.db.database.orm.getMetadata());
    expect(sql.rowJson('Execution', Execution, EXECUTION_FIELDS)).not.toBeNull();
    expect(sql.rowJson('Agent', Agent)).not.toBeNull();
  });
});

// The other lists the database writes: each answer the JS presenter's JSON of the same rows (the
// service's own page, read in process with the route's own arguments), with rows holding the tricky text.
interface OtherList {
  path: string;
  page: string;
  entity: new () => object;
  read(actor: Actor, args: any): Promise<unknown>;
  params?: Record<string, string>;
  /** The GraphQL list of the same rows (answered whole by the database too, src/graphql/sql-answers.ts). */
  field: string;
}
const OTHER_LISTS: OtherList[] = [
  { path: '/call-flows', field: 'callFlows', page: 'CallFlowPage', entity: CallFlow, read: (actor, args) => app.gateway.services.callFlows.list(actor, args) },
  {
    path: '/do-not-call',
    field: 'doNotCallEntries',
    page: 'DoNotCallPage',
    entity: DoNotCallEntry,
    read: (actor, args) => app.gateway.services.doNotCall.list(actor, args),
  },
  {
    path: '/business-entities',
    field: 'businessEntities',
    page: 'BusinessEntityPage',
    entity: BusinessEntity,
    read: (actor, args) => app.gateway.services.businessEntities.list(actor, args),
  },
  {
    path: '/contacts',
    field: 'contacts',
    page: 'ContactPage',
    entity: Contact,
    read: (actor, args) => app.gateway.services.contacts.list(actor, args),
    params: { search: 'emoji' },
  },
  {
    path: '/knowledge-bases',
    field: 'knowledgeBases',
    page: 'KnowledgeBasePage',
    entity: KnowledgeBase,
    read: (actor, args) => app.gateway.services.knowledge.listBases(actor, args),
  },
  {
    path: '/organization/credit-ledger',
    field: 'creditLedger',
    page: 'CreditLedgerPage',
    entity: CreditLedgerEntry,
    read: (actor, args) => app.gateway.services.credits.ledger(actor, args),
  },
  {
    path: '/events',
    field: 'events',
    page: 'EventPage',
    entity: Event,
    read: (actor, args) => app.gateway.services.events.list(actor, args),
    params: { limit: '50' },
  },
  {
    path: '/carrier-connections',
    field: 'carrierConnections',
    page: 'CarrierConnectionPage',
    entity: CarrierConnection,
    read: (actor, args) => app.gateway.services.carrierConnections.list(actor, args),
  },
];

/** Every field of `type` the database writes: those without arguments or a resolver of their own (JSON objects by their fields), and to-one ids. */
function storedSelection(type: GraphQLObjectType, depth: number): string {
  return Object.values(type.getFields())
    .filter((field) => field.args.length === 0 && (!field.resolve || (field.name.endsWith('Id') && !isObjectType(getNamedType(field.type)))))
    .map((field) => {
      const named = getNamedType(field.type);
      return isObjectType(named) ? (depth < 3 ? `${field.name} { ${storedSelection(named, depth + 1)} }` : '') : field.name;
    })
    .filter((part) => part !== '' && !part.endsWith('{  }'))
    .join(' ');
}

describe('the other lists the database writes', () => {
  beforeAll(async () => {
    const flow = await acme.rest.post('/api/call-flows', flowInput());
    expect(flow.status).toBe(201);
    await app.sql('update call_flows set description = ? where id = ?', [TRICKY, flow.body.id]);
    expect((await acme.rest.post('/api/do-not-call', { phone: '+14155550123', note: TRICKY })).status).toBe(201);
    const contact = await acme.rest.post('/api/contacts', { name: TRICKY, phone: '+14155550124' });
    expect(contact.status).toBe(201);
    const entity = await acme.rest.post('/api/business-entities', {
      contactId: contact.body.id,
      type: 'account',
      name: TRICKY,
      attributes: { n: 1.5, nested: { t: TRICKY } },
    });
    expect(entity.status).toBe(201);
    expect((await acme.rest.post('/api/knowledge-bases', { name: 'Base', description: TRICKY })).status).toBe(201);
    await acme.grantCredits(25, TRICKY);
    await other.grantCredits(5, 'Other’s grant');
    const connection = await acme.rest.post('/api/carrier-connections', {
      name: TRICKY.slice(0, 60),
      accountSid: twilio.accountSid,
      authToken: twilio.authToken,
    });
    expect(connection.status).toBe(201);
  });

  it.each(OTHER_LISTS.map((list) => [list.path, list] as const))(
    '%s: the JS presenter’s JSON of the same rows, none of another organization',
    async (_path, list) => {
      const route = REST_ROUTES.find((each) => each.method === 'get' && each.path === list.path)!;
      const params = list.params ?? {};
      const res = await acme.rest.get(`/api${list.path}?${new URLSearchParams(params)}`);
      expect(res.status).toBe(200);
      const args = await parseInput(route.query!, params, 'query');
      const expected = await inProcess(async () => presenter.present(list.page, await list.read(actorOf(acme), args)));
      expect(JSON.stringify(res.body)).toBe(JSON.stringify(expected));
      const theirs = await other.rest.get(`/api${list.path}?${new URLSearchParams(params)}`);
      expect(theirs.status).toBe(200);
      const ours = new Set((res.body.data as { id: string }[]).map((row) => row.id));
      for (const row of theirs.body.data as { id: string }[]) expect(ours.has(row.id)).toBe(false);
    },
  );

  it.each(OTHER_LISTS.map((list) => [list.field, list] as const))(
    'GraphQL %s: the database’s answer of every stored field is the executor’s, key for key',
    async (_field, list) => {
      const schema = await gatewaySchema();
      const page = schema.getType(list.page) as GraphQLObjectType;
      const item = getNamedType(page.getFields().data!.type) as GraphQLObjectType;
      const query = `query($limit: Int) { list: ${list.field}(limit: $limit) { data { ${storedSelection(item, 0)} } meta { total totalPages } } }`;
      const variables = { limit: Number(list.params?.limit ?? 20) };
      const send = async (text: string) => {
        const res = await fetch(`${app.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': acme.apiKey },
          body: JSON.stringify({ query: text, variables }),
        });
        return res.text();
      };
      const before = answeredByDatabase();
      const fast = await send(query);
      expect(answeredByDatabase()).toBe(before + 1);
      const slow = await send(query.replace('data {', 'data @include(if: true) {'));
      expect(answeredByDatabase()).toBe(before + 1);
      expect(JSON.parse(fast).errors).toBeUndefined();
      expect(JSON.parse(fast).data.list.data.length).toBeGreaterThan(0);
      // The same JSON, key order included; not the same bytes (PostgreSQL spaces its JSON, as on REST).
      expect(JSON.stringify(JSON.parse(fast))).toBe(JSON.stringify(JSON.parse(slow)));
    },
  );

  it('the lists hold the tricky rows, written by the database', async () => {
    const sql = new Presenter(presenter['schema'], app.db.database.orm.getMetadata());
    for (const list of OTHER_LISTS) {
      const page = (await gatewaySchema()).getType(list.page) as import('graphql').GraphQLObjectType;
      const item = (page.getFields().data!.type as any).ofType.ofType.ofType.name as string;
      expect([list.path, sql.rowJson(item, list.entity) !== null]).toEqual([list.path, true]);
    }
    for (const path of ['/call-flows', '/do-not-call', '/contacts', '/business-entities', '/knowledge-bases', '/organization/credit-ledger']) {
      expect([path, JSON.stringify((await acme.rest.get(`/api${path}`)).body).includes(JSON.stringify(TRICKY).slice(1, -1))]).toEqual([path, true]);
    }
  });
});
