import {
  CreateAgentDocument,
  ConversationToolCallsDocument,
  CreateMcpServerDocument,
  CreateToolDocument,
  DeleteToolDocument,
  McpServerDocument,
  RotateToolSecretDocument,
  TestAgentToolsDocument,
  ToolDocument,
  ToolsDocument,
  UpdateToolDocument,
} from '../generated/graphql.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { addUser, type TestUser } from '../helpers/users.js';
import { BusinessEndpoint } from './business.js';
import { closedPort, createTool, LOOKUP_PARAMETERS, startToolsApp, toolAgent } from './fixtures.js';
import { McpDouble } from './mcp-double.js';
import { MAX_PARAMETERS_CHARS, TOOL_LIMITS } from '../../src/modules/tools/tool-limits.js';
import { randomUUID } from 'node:crypto';
import { TOOL_STEPS } from '../../src/modules/models/model.types.js';
import { FakeOpenAiChat } from '../support/fake-openai-chat.js';
import OpenAI from 'openai';

// HTTP tools and MCP servers through the real doors: CRUD and its limits on REST and GraphQL, a tool
// called by builtin/echo from a test message and a conversation, the signed request a business
// endpoint on loopback verifies with the standardwebhooks package, the record on both doors and its
// tool.called event, and every fault the issue names. PGlite, and PostgreSQL with TEST_DATABASE_URL.

const POLICY = 'Refunds above fifty dollars need a manager.';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let member: TestUser;
let business: BusinessEndpoint;
let mcp: McpDouble;

beforeAll(async () => {
  business = await new BusinessEndpoint().start();
  mcp = await new McpDouble().start();
  app = await startToolsApp();
  acme = await app.organization('Acme tools');
  other = await app.organization('Other tools');
  member = await addUser(app, acme, 'member');
});
afterAll(async () => {
  await app?.close();
  await business?.close();
  await mcp?.close();
});
beforeEach(() => {
  business.received.length = 0;
  business.behave = () => ({ json: { status: 'shipped', eta: 'Monday' } });
});
afterEach(() => {
  mcp.auth = null;
  // Every message the gateway sent the MCP double is one the protocol's schema allows.
  expect(mcp.problems).toEqual([]);
});

const gqlCode = (result: { errors?: { extensions?: Record<string, unknown> }[] }) => result.errors?.[0]?.extensions?.code;

describe('HTTP tools on both doors', () => {
  it('creates, reads, lists, changes, rotates and deletes a tool; the secret only in the create and rotate answers, header values never', async () => {
    const created = await acme.rest.post('/api/tools', {
      name: 'crm_lookup',
      description: 'Find the caller in the CRM',
      parameters: LOOKUP_PARAMETERS,
      url: `${business.url}/crm`,
      headers: [{ name: 'Authorization', value: 'Bearer crm-token-123' }],
      timeoutMs: 2000,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      organizationId: acme.organizationId,
      name: 'crm_lookup',
      description: 'Find the caller in the CRM',
      parameters: LOOKUP_PARAMETERS,
      url: `${business.url}/crm`,
      method: 'POST',
      headerNames: ['Authorization'],
      timeoutMs: 2000,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      secretHint: created.body.secret.slice(-4),
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body.id as string;
    const read = await acme.rest.get(`/api/tools/${id}`);
    expect(read.body).toEqual({ ...created.body, secret: undefined, updatedAt: expect.any(String) } as never);
    expect(JSON.stringify(read.body)).not.toContain('crm-token-123');
    const graphql = await acme.graphql.ok(ToolDocument, { id });
    expect(graphql.tool).toMatchObject({ name: 'crm_lookup', headerNames: ['Authorization'], secretHint: created.body.secretHint });
    // Sealed at rest: neither the header value nor the secret is in the row.
    const [row] = await app.sql<Record<string, string>>('select headers_encrypted, secret_encrypted from tools where id = ?', [id]);
    expect(`${row!.headers_encrypted}${row!.secret_encrypted}`).not.toContain('crm-token-123');
    expect(row!.secret_encrypted).not.toContain(created.body.secret);
    // A member reads; only owners and admins change.
    expect((await member.rest.get(`/api/tools/${id}`)).status).toBe(200);
    expect((await member.graphql.ok(ToolsDocument, {})).tools.meta.total).toBe(1);
    expect((await member.rest.post('/api/tools', { name: 'x', description: 'x', parameters: { type: 'object' }, url: business.url })).status).toBe(403);
    expect(gqlCode(await member.graphql.run(DeleteToolDocument, { id }))).toBe('FORBIDDEN');
    expect((await member.rest.delete(`/api/tools/${id}`)).status).toBe(403);

    const changed = await acme.graphql.ok(UpdateToolDocument, { id, input: { description: 'Find the caller', headers: [] } });
    expect(changed.updateTool).toMatchObject({ description: 'Find the caller', headerNames: [] });
    const rotated = await acme.graphql.ok(RotateToolSecretDocument, { id });
    expect(rotated.rotateToolSecret.secret).not.toBe(created.body.secret);
    expect(rotated.rotateToolSecret.previousSecretExpiresAt).not.toBeNull();
    expect((await acme.rest.get('/api/tools?search=crm')).body.meta.total).toBe(1);
    expect((await acme.rest.delete(`/api/tools/${id}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/tools/${id}`)).status).toBe(404);
  });

  it('answers 404 for another organization’s tool on every route and field, on both doors', async () => {
    const tool = await createTool(acme, business.url, { name: 'mine_only' });
    for (const [method, path] of [
      ['get', ''],
      ['put', ''],
      ['delete', ''],
      ['post', '/rotate-secret'],
    ] as const) {
      const res = await other.rest.request(method.toUpperCase(), `/api/tools/${tool.id}${path}`, method === 'put' ? { description: 'x' } : undefined);
      expect([method, res.status]).toEqual([method, 404]);
    }
    expect(gqlCode(await other.graphql.run(ToolDocument, { id: tool.id }))).toBe('NOT_FOUND');
    expect(gqlCode(await other.graphql.run(UpdateToolDocument, { id: tool.id, input: { description: 'x' } }))).toBe('NOT_FOUND');
    expect(gqlCode(await other.graphql.run(RotateToolSecretDocument, { id: tool.id }))).toBe('NOT_FOUND');
    expect((await other.graphql.ok(ToolsDocument, {})).tools.meta.total).toBe(0);
    // Nor can another organization's agent list it.
    const agent = await other.rest.post('/api/agents', { name: 'Thief', instructions: 'x', modelConfig: { model: 'builtin/echo' }, toolIds: [tool.id] });
    expect(agent.status).toBe(400);
    expect(agent.body.errors).toEqual([{ field: 'toolIds.0', message: 'no tool of the organization has this id' }]);
    await acme.rest.delete(`/api/tools/${tool.id}`);
  });

  // The same bad input, the same error on both doors.
  const SCHEMA_BOMB = {
    type: 'object',
    properties: {
      a: { type: 'array', minItems: 100, items: { type: 'array', minItems: 100, items: { type: 'array', minItems: 100, items: { type: 'string' } } } },
    },
  };
  it.each([
    ['a built-in’s name', { name: 'end_call' }, 'name', /built-in tool/],
    ['a name the next built-ins take', { name: 'transfer_call' }, 'name', /built-in tool/],
    ['a name models do not take', { name: 'look up' }, 'name', /letters, digits, underscores or hyphens/],
    ['a schema bomb', { parameters: SCHEMA_BOMB }, 'parameters', /smallest valid value/],
    ['a reference', { parameters: { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } } }, 'parameters', /\$ref/],
    [
      'nesting past the depth',
      {
        parameters: {
          type: 'object',
          properties: {
            a: {
              type: 'object',
              properties: {
                b: { type: 'object', properties: { c: { type: 'object', properties: { d: { type: 'object', properties: { e: { type: 'string' } } } } } } },
              },
            },
          },
        },
      },
      'parameters',
      /levels deep/,
    ],
    ['a pattern RE2 cannot run', { parameters: { type: 'object', properties: { a: { type: 'string', pattern: '(a)\\1' } } } }, 'parameters', /RE2/],
    ['arguments that are not an object', { parameters: { type: 'string' } }, 'parameters', /"type": "object"/],
    ['a header the gateway sets', { headers: [{ name: 'webhook-signature', value: 'v1,x' }] }, 'headers.0.name', /set by the gateway/],
    ['a timeout past 30 s', { timeoutMs: 30_001 }, 'timeoutMs', /30000/],
    [
      'parameters past their size',
      { parameters: { type: 'object', description: 'x'.repeat(MAX_PARAMETERS_CHARS), properties: {} } },
      'parameters',
      new RegExp(`longer than ${MAX_PARAMETERS_CHARS}`),
    ],
    [
      'more headers than a tool sends',
      { headers: Array.from({ length: TOOL_LIMITS.headers + 1 }, (_, i) => ({ name: `x-h${i}`, value: 'v' })) },
      'headers',
      /headers/,
    ],
    ['an ftp URL', { url: 'ftp://example.com/x' }, 'url', /https or http/],
  ])('refuses %s with 400 naming the field, on both doors', async (_what, fields, field, message) => {
    const input = { name: 'bad_tool', description: 'x', parameters: LOOKUP_PARAMETERS, url: business.url, ...fields };
    const rest = await acme.rest.post('/api/tools', input);
    expect(rest.status).toBe(400);
    expect(rest.body.errors[0].field).toBe(field);
    expect(rest.body.errors[0].message).toMatch(message);
    const graphql = await acme.graphql.run(CreateToolDocument, { input: input as never });
    expect(gqlCode(graphql)).toBe('BAD_USER_INPUT');
    expect((graphql.errors?.[0]?.extensions?.errors as { field: string }[])[0]!.field).toBe(field);
    expect((await app.sql('select id from tools where name = ?', ['bad_tool'])).length).toBe(0);
  });

  it('refuses an agent more tools than it may call, with the same error on both doors', async () => {
    const ids = Array.from({ length: TOOL_LIMITS.toolsPerAgent + 1 }, () => randomUUID());
    const input = { name: 'Too many tools', instructions: 'x', modelConfig: { model: 'builtin/echo' }, toolIds: ids };
    const rest = await acme.rest.post('/api/agents', input);
    expect(rest.status).toBe(400);
    expect(rest.body.errors).toEqual([expect.objectContaining({ field: 'toolIds', message: expect.stringContaining(String(TOOL_LIMITS.toolsPerAgent)) })]);
    const graphql = await acme.graphql.run(CreateAgentDocument, { input: input as never });
    expect(gqlCode(graphql)).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.extensions?.errors).toEqual(rest.body.errors);
  });

  it('holds an organization to its number of tools even when the creates come at once', async () => {
    const burst = await app.organization('Tool burst');
    const input = (name: string) => ({ name, description: 'x', parameters: { type: 'object' }, url: business.url });
    const first = await createTool(burst, business.url, { name: 't0' });
    // The organization one short of its cap less one: copies of its first tool, written straight in.
    await app.sql(
      `insert into tools (id, created_at, updated_at, organization_id, name, description, parameters, url, method, header_names, timeout_ms, secret_encrypted, secret_hint)
       select gen_random_uuid(), now(), now(), organization_id, 't' || n, description, parameters, url, method, header_names, timeout_ms, secret_encrypted, secret_hint
       from tools cross join generate_series(1, ?) as n where id = ?`,
      [TOOL_LIMITS.toolsPerOrganization - 3, first.id],
    );
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => burst.rest.post('/api/tools', input(`late${i}`))));
    expect(answers.map((res) => res.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect(answers.find((res) => res.status === 409)!.body.detail).toMatch(`at most ${TOOL_LIMITS.toolsPerOrganization} tools`);
    expect((await burst.rest.get('/api/tools')).body.meta.total).toBe(TOOL_LIMITS.toolsPerOrganization);
  });

  it('takes a name once per organization (409), and another organization may take it too', async () => {
    const first = await createTool(acme, business.url, { name: 'unique_name' });
    const again = await acme.rest.post('/api/tools', { name: 'unique_name', description: 'x', parameters: { type: 'object' }, url: business.url });
    expect(again.status).toBe(409);
    expect((await createTool(other, business.url, { name: 'unique_name' })).name).toBe('unique_name');
    await acme.rest.delete(`/api/tools/${first.id}`);
  });
});

describe('a tool called by the agent', () => {
  let tool: { id: string; secret: string };
  let agentId: string;

  beforeAll(async () => {
    tool = await createTool(acme, `${business.url}/orders`, { headers: [{ name: 'X-Api-Key', value: 'shop-key-1' }] });
    business.secrets = [tool.secret];
    agentId = await toolAgent(acme, { policy: POLICY, toolIds: [tool.id], variables: [{ name: 'shop', default: 'Acme' }] });
  });

  it('sends one signed request with the arguments and the context, and its answer reaches the model (a test message stores nothing)', async () => {
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'call lookup_order {"orderId": "A1"}' });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe('Echo: lookup_order answered {"status":"shipped","eta":"Monday"}');
    expect(business.received).toHaveLength(1);
    const [request] = business.received;
    expect(request!.verifiedWith).toEqual([0]);
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/orders');
    expect(request!.headers['x-api-key']).toBe('shop-key-1');
    expect(request!.headers['webhook-id']).toBe(res.body.toolCalls[0].id);
    expect(request!.parsed).toEqual({ tool: 'lookup_order', arguments: { orderId: 'A1' }, call: null, contact: null, conversationId: null, agentId });
    expect(res.body.toolCalls).toEqual([
      expect.objectContaining({
        tool: 'lookup_order',
        source: 'http',
        toolId: tool.id,
        arguments: { orderId: 'A1' },
        status: 'succeeded',
        statusCode: 200,
        answer: '{"status":"shipped","eta":"Monday"}',
        error: null,
        conversationId: null,
      }),
    ]);
    expect(JSON.stringify(res.body)).not.toContain(POLICY);
    // GraphQL's testAgent calls the same way.
    const graphql = await acme.graphql.ok(TestAgentToolsDocument, { id: agentId, message: 'call lookup_order {"orderId": "B2"}' });
    expect(graphql.testAgent.response).toContain('answered');
    expect(business.received[1]!.parsed.arguments).toEqual({ orderId: 'B2' });
  });

  it('records each call on the conversation in order with the messages, on both doors, with a tool.called event; another organization gets 404', async () => {
    const conversation = await acme.rest.post(`/api/agents/${agentId}/conversations`, { title: 'Orders' });
    const id = conversation.body.id as string;
    expect((await acme.rest.post(`/api/conversations/${id}/messages`, { message: 'Hello' })).status).toBe(200);
    const reply = await acme.rest.post(`/api/conversations/${id}/messages`, { message: 'call lookup_order {"orderId": "C3"}' });
    expect(reply.body.response).toBe('Echo: lookup_order answered {"status":"shipped","eta":"Monday"}');
    expect(business.received.at(-1)!.parsed).toMatchObject({ conversationId: id, agentId, arguments: { orderId: 'C3' } });
    const rest = await acme.rest.get(`/api/conversations/${id}/tool-calls`);
    expect(rest.status).toBe(200);
    expect(rest.body.meta.total).toBe(1);
    // After the 3rd message (the user's second), before the reply.
    expect(rest.body.data[0]).toMatchObject({
      conversationId: id,
      sequence: 1,
      afterSequence: 3,
      tool: 'lookup_order',
      status: 'succeeded',
      durationMs: expect.any(Number),
    });
    const graphql = await acme.graphql.ok(ConversationToolCallsDocument, { id });
    expect(graphql.conversation.toolCallCount).toBe(1);
    expect(
      graphql.conversation.toolCalls.data.map(({ id: callId, sequence, afterSequence, status }) => ({ id: callId, sequence, afterSequence, status })),
    ).toEqual(
      rest.body.data.map(({ id: callId, sequence, afterSequence, status }: Record<string, unknown>) => ({ id: callId, sequence, afterSequence, status })),
    );
    expect(graphql.conversation.messages.data.map((message) => message.sequence)).toEqual([1, 2, 3, 4]);
    const events = (await acme.rest.get('/api/events?type=tool.called')).body.data as { payload: Record<string, unknown> }[];
    expect(events.map((event) => event.payload.id)).toContain(rest.body.data[0].id);
    expect(events.find((event) => event.payload.id === rest.body.data[0].id)!.payload).toMatchObject({
      tool: 'lookup_order',
      conversationId: id,
      afterSequence: 3,
      arguments: { orderId: 'C3' },
    });
    expect((await other.rest.get(`/api/conversations/${id}/tool-calls`)).status).toBe(404);
    expect(gqlCode(await other.graphql.run(ConversationToolCallsDocument, { id }))).toBe('NOT_FOUND');
    expect((await acme.rest.get(`/api/conversations/${id}`)).body.toolCallCount).toBe(1);
  });

  it('tells the model arguments outside the schema and sends nothing', async () => {
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'call lookup_order {"orderId": 42, "extra": true}' });
    expect(res.body.response).toMatch(/^Echo: lookup_order failed: the arguments do not match the tool's parameters: .*Nothing was sent\.$/);
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'rejected', statusCode: null });
    expect(business.received).toHaveLength(0);
  });

  it('never judges what the caller wrote: the policy sentence in their own message goes to the tool as they wrote it', async () => {
    const loose = await createTool(acme, `${business.url}/notes`, {
      name: 'add_note',
      parameters: { type: 'object', properties: { note: { type: 'string' } } },
    });
    const noting = await toolAgent(acme, { name: 'Notes', policy: POLICY, toolIds: [loose.id] });
    const res = await acme.rest.post(`/api/agents/${noting}/test`, { message: `call add_note {"note": "${POLICY}"}` });
    expect(res.body.toolCalls[0].status).toBe('succeeded');
    expect(business.received[0]!.parsed.arguments).toEqual({ note: POLICY });
  });

  it.each([
    ['a non-2xx answer', () => ({ json: { error: 'no such order' }, status: 404 }), /answered HTTP 404/],
    [
      'a redirect (not followed)',
      () => ({ status: 302, location: 'http://169.254.169.254/latest/meta-data' }),
      /HTTP 302 \(a redirect, which is not followed\)/,
    ],
  ])('tells the model %s as an error it can apologise for, and records it', async (_what, behave, error) => {
    business.behave = behave as never;
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'call lookup_order {"orderId": "A1"}' });
    expect(res.status).toBe(200);
    expect(res.body.response).toMatch(/^Echo: lookup_order failed: /);
    expect(res.body.response).toMatch(/Apologise to the caller/);
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(error) });
    expect(business.received).toHaveLength(1);
  });

  it('cuts a 50 MB answer at 64 KiB and closes the connection', async () => {
    business.behave = () => ({ huge: 50 * 1024 * 1024 });
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'call lookup_order {"orderId": "A1"}' });
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'succeeded', statusCode: 200 });
    expect(res.body.toolCalls[0].answer.length).toBeLessThanOrEqual(TOOL_LIMITS.recordChars + 1);
    expect(res.body.response.length).toBeLessThan(TOOL_LIMITS.modelChars + 200);
    expect(res.body.response).toMatch(/ \(truncated\)$/);
    // The endpoint could not write the whole answer: the gateway closed the connection well before.
    expect(business.written).toBeLessThan(50 * 1024 * 1024);
  });

  it('holds its deadline over a slow-loris answer and a hung endpoint', async () => {
    const slow = await createTool(acme, `${business.url}/slow`, { name: 'slow_lookup', timeoutMs: 300 });
    const slowAgent = await toolAgent(acme, { name: 'Slow', toolIds: [slow.id] });
    for (const behaviour of [{ drip: 50 }, 'hang'] as const) {
      business.behave = () => behaviour;
      const res = await acme.rest.post(`/api/agents/${slowAgent}/test`, { message: 'call slow_lookup {"orderId": "A1"}' });
      expect(res.status).toBe(200);
      expect(res.body.toolCalls[0]).toMatchObject({ status: 'failed', error: 'the tool did not answer within 300 ms' });
      // The deadline covers the whole exchange: a byte every 50 ms does not extend it.
      expect(res.body.toolCalls[0].durationMs).toBeLessThan(3000);
    }
  });

  it('tells the model of an unreachable host', async () => {
    const port = await closedPort();
    await app.sql('update tools set url = ? where id = ?', [`http://127.0.0.1:${port}/gone`, tool.id]);
    const res = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'call lookup_order {"orderId": "A1"}' });
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/could not be reached \(ECONNREFUSED\)/) });
    await app.sql('update tools set url = ? where id = ?', [`${business.url}/orders`, tool.id]);
  });

  it('will not delete a tool an agent lists (409 naming it); once the agent lets go it goes, and an archived agent’s list is cleaned', async () => {
    const spare = await createTool(acme, business.url, { name: 'spare_tool' });
    const user = await toolAgent(acme, { name: 'Spare user', toolIds: [spare.id] });
    const refused = await acme.rest.delete(`/api/tools/${spare.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('Spare user');
    expect(gqlCode(await acme.graphql.run(DeleteToolDocument, { id: spare.id }))).toBe('CONFLICT');
    expect((await acme.rest.delete(`/api/agents/${user}`)).status).toBe(200);
    expect((await acme.rest.delete(`/api/tools/${spare.id}`)).status).toBe(204);
    expect((await acme.rest.get(`/api/agents/${user}`)).body.toolIds).toEqual([]);
  });

  it('tells the model of a tool removed since the turn began, and the reply goes on', async () => {
    const gone = await createTool(acme, business.url, { name: 'gone_tool' });
    const user = await toolAgent(acme, { name: 'Gone user', toolIds: [gone.id] });
    // The row goes between the turn's loading of the tools and the call (as a delete racing a turn would).
    business.behave = () => ({ json: {} });
    const ran = app.gateway.services.toolPort;
    const original = ran.toolsFor;
    ran.toolsFor = async (agent, session) => {
      const tools = await original(agent, session);
      await app.sql('delete from tools where id = ?', [gone.id]);
      return tools;
    };
    try {
      const res = await acme.rest.post(`/api/agents/${user}/test`, { message: 'call gone_tool {"orderId": "A1"}' });
      expect(res.status).toBe(200);
      expect(res.body.response).toBe('Echo: gone_tool failed: the tool gone_tool is no longer available. Nothing was sent.');
      expect(res.body.toolCalls[0].status).toBe('rejected');
    } finally {
      ran.toolsFor = original;
    }
    expect(business.received).toHaveLength(0);
  });

  it('answers activation with 409 naming the tools when the model cannot call tools', async () => {
    const draft = await acme.rest.post('/api/agents', {
      name: 'Extractive',
      instructions: 'x',
      modelConfig: { model: 'builtin/extractive' },
      toolIds: [tool.id],
    });
    expect(draft.status).toBe(201);
    const activated = await acme.rest.post(`/api/agents/${draft.body.id}/activate`);
    expect(activated.status).toBe(409);
    expect(activated.body.detail).toContain('lookup_order');
  });
});

describe('MCP servers', () => {
  beforeAll(() => {
    mcp.tools = [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        answer: (args) => ({ text: `Sunny in ${String(args.city)}` }),
      },
      {
        name: 'book',
        description: 'Book a slot',
        inputSchema: { type: 'object', properties: { day: { type: 'string' } } },
        answer: () => ({ text: 'fully booked', isError: true }),
      },
      {
        name: 'bomb',
        description: 'A schema bomb',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'string' } } } },
        },
        answer: () => ({ text: 'never' }),
      },
      { name: 'end_call', description: 'Named like a built-in', inputSchema: { type: 'object' }, answer: () => ({ text: 'never' }) },
    ];
  });

  it('holds an organization to its number of MCP servers even when the registrations come at once', async () => {
    const burst = await app.organization('MCP burst');
    await app.sql(
      `insert into mcp_servers (id, created_at, updated_at, organization_id, name, url)
       select gen_random_uuid(), now(), now(), ?, 's' || n, ? from generate_series(1, ?) as n`,
      [burst.organizationId, mcp.url, TOOL_LIMITS.mcpServersPerOrganization - 2],
    );
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => burst.rest.post('/api/mcp-servers', { name: `late${i}`, url: mcp.url })));
    expect(answers.map((res) => res.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect(answers.find((res) => res.status === 409)!.body.detail).toMatch(`at most ${TOOL_LIMITS.mcpServersPerOrganization} MCP servers`);
    expect((await app.sql<{ n: number }>('select count(*)::int as n from mcp_servers where organization_id = ?', [burst.organizationId]))[0]!.n).toBe(
      TOOL_LIMITS.mcpServersPerOrganization,
    );
  });

  it('lists a server’s tools through the SDK, leaves out (with the reason) a refused schema or name, and an agent calls one; 404 for another organization', async () => {
    mcp.auth = { name: 'Authorization', value: 'Bearer mcp-secret' };
    const created = await acme.rest.post('/api/mcp-servers', { name: 'Weather', url: mcp.url, auth: { name: 'Authorization', value: 'Bearer mcp-secret' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'ready', lastError: null, authHeaderName: 'Authorization' });
    expect(JSON.stringify(created.body)).not.toContain('mcp-secret');
    const byName = Object.fromEntries((created.body.tools as { name: string; refused: string | null }[]).map((tool) => [tool.name, tool.refused]));
    expect(byName.get_weather).toBeNull();
    expect(byName.bomb).toBe('its inputSchema at /properties/a/minItems is 1000; at most 100');
    expect(byName.end_call).toMatch(/built-in/);
    const serverId = created.body.id as string;
    expect((await acme.graphql.ok(McpServerDocument, { id: serverId })).mcpServer.tools).toHaveLength(4);
    expect((await other.rest.get(`/api/mcp-servers/${serverId}`)).status).toBe(404);
    expect((await other.rest.post(`/api/mcp-servers/${serverId}/refresh`)).status).toBe(404);
    expect(gqlCode(await other.graphql.run(McpServerDocument, { id: serverId }))).toBe('NOT_FOUND');
    expect((await member.rest.post(`/api/mcp-servers/${serverId}/refresh`)).status).toBe(403);

    // A refused tool, or one the server does not list, cannot be given to an agent.
    const refused = await acme.rest.post('/api/agents', {
      name: 'x',
      instructions: 'x',
      modelConfig: { model: 'builtin/echo' },
      mcpTools: [{ serverId, names: ['bomb', 'nope'] }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((error: { field: string }) => error.field)).toEqual(['mcpTools.0.names.0', 'mcpTools.0.names.1']);

    const agentId = await toolAgent(acme, { name: 'Weather desk', mcpTools: [{ serverId, names: ['get_weather', 'book'] }] });
    const conversation = (await acme.rest.post(`/api/agents/${agentId}/conversations`, {})).body.id as string;
    const sunny = await acme.rest.post(`/api/conversations/${conversation}/messages`, { message: 'call get_weather {"city": "Lyon"}' });
    expect(sunny.body.response).toBe('Echo: get_weather answered "Sunny in Lyon"');
    expect(mcp.calls.at(-1)).toEqual({ name: 'get_weather', arguments: { city: 'Lyon' } });
    const booked = await acme.rest.post(`/api/conversations/${conversation}/messages`, { message: 'call book {"day": "Monday"}' });
    expect(booked.body.response).toMatch(/^Echo: book failed: the MCP tool reported an error: fully booked/);
    const invalid = await acme.rest.post(`/api/conversations/${conversation}/messages`, { message: 'call get_weather {}' });
    expect(invalid.body.toolCalls[0].status).toBe('rejected');
    expect(mcp.calls).toHaveLength(2);
    const calls = (await acme.rest.get(`/api/conversations/${conversation}/tool-calls`)).body.data as Record<string, unknown>[];
    expect(calls.map((call) => [call.tool, call.source, call.status, call.toolId])).toEqual([
      ['get_weather', 'mcp', 'succeeded', serverId],
      ['book', 'mcp', 'failed', serverId],
      ['get_weather', 'mcp', 'rejected', serverId],
    ]);
    expect(mcp.methods).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
    mcp.auth = null;
  });

  it('keeps a server that is down, or answers what is not MCP, unavailable with the reason; a call to a server gone down fails and the conversation goes on', async () => {
    const down = await acme.graphql.ok(CreateMcpServerDocument, { input: { name: 'Down', url: `http://127.0.0.1:${await closedPort()}/mcp` } });
    expect(down.createMcpServer).toMatchObject({ status: 'unavailable', tools: [], lastError: expect.stringMatching(/could not be reached/) });
    // Garbage: the business endpoint answers JSON that is no JSON-RPC.
    business.behave = () => ({ json: { hello: 'world' } });
    const garbage = await acme.rest.post('/api/mcp-servers', { name: 'Garbage', url: `${business.url}/mcp` });
    expect(garbage.status).toBe(201);
    expect(garbage.body).toMatchObject({ status: 'unavailable', tools: [], lastError: expect.stringMatching(/not one the gateway reads/) });

    const weather = await acme.rest.post('/api/mcp-servers', { name: 'Weather 2', url: mcp.url });
    const agentId = await toolAgent(acme, { name: 'Weather 2 desk', mcpTools: [{ serverId: weather.body.id, names: ['get_weather'] }] });
    await app.sql('update mcp_servers set url = ? where id = ?', [`http://127.0.0.1:${await closedPort()}/mcp`, weather.body.id]);
    const conversation = (await acme.rest.post(`/api/agents/${agentId}/conversations`, {})).body.id as string;
    const failed = await acme.rest.post(`/api/conversations/${conversation}/messages`, { message: 'call get_weather {"city": "Oslo"}' });
    expect(failed.status).toBe(200);
    expect(failed.body.response).toMatch(/^Echo: get_weather failed: the MCP server could not be reached/);
    expect((await acme.rest.post(`/api/conversations/${conversation}/messages`, { message: 'Thanks anyway' })).body.response).toBe('Echo: Thanks anyway');
  });
});

describe('the address rules without TOOLS_ALLOW_PRIVATE', () => {
  let strict: TestApp;
  let org: TestOrganization;
  beforeAll(async () => {
    strict = await startToolsApp({ tools: { allowPrivate: false, mcpRefreshMs: 600_000 } });
    org = await strict.organization('Strict');
  });
  afterAll(() => strict?.close());

  it.each(['http://127.0.0.1:9/x', 'https://127.0.0.1/x', 'https://localhost/x', 'https://10.0.0.7/x', 'https://169.254.169.254/latest', 'https://[::1]/x'])(
    'refuses %s at save with the one message, on both doors',
    async (url) => {
      const rest = await org.rest.post('/api/tools', { name: 'private_tool', description: 'x', parameters: { type: 'object' }, url });
      expect(rest.status).toBe(400);
      expect(rest.body.errors[0].field).toBe('url');
      const graphql = await org.graphql.run(CreateToolDocument, { input: { name: 'private_tool', description: 'x', parameters: { type: 'object' }, url } });
      expect(gqlCode(graphql)).toBe('BAD_USER_INPUT');
      const mcpServer = await org.rest.post('/api/mcp-servers', { name: 'Private', url });
      expect(mcpServer.status).toBe(400);
    },
  );

  it('refuses again at call time a tool whose address became private since it was saved, and sends nothing', async () => {
    const tool = await org.rest.post('/api/tools', {
      name: 'public_then_private',
      description: 'x',
      parameters: { type: 'object' },
      url: 'https://93.184.215.14/orders',
    });
    expect(tool.status).toBe(201);
    // As if its DNS now answered a loopback address: the row points at the business endpoint on 127.0.0.1.
    await strict.sql('update tools set url = ? where id = ?', [`https://127.0.0.1:${new URL(business.url).port}/orders`, tool.body.id]);
    const agentId = await toolAgent(org, { toolIds: [tool.body.id] });
    const res = await org.rest.post(`/api/agents/${agentId}/test`, { message: 'call public_then_private' });
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/address was refused/) });
    expect(business.received).toHaveLength(0);
  });
});

describe('an OpenAI-compatible model that calls tools (the AI SDK’s tool calling)', () => {
  let chat: FakeOpenAiChat;
  let modelApp: TestApp;
  let org: TestOrganization;
  let tool: { id: string; secret: string };
  let agentId: string;

  beforeAll(async () => {
    chat = await new FakeOpenAiChat().start();
    modelApp = await startToolsApp({ providers: { openaiCompatibleBaseUrl: chat.url, openaiCompatibleApiKey: 'sk-compatible' } });
    org = await modelApp.organization('Model tools');
    tool = await createTool(org, `${business.url}/orders`);
    agentId = await toolAgent(org, { modelConfig: { model: 'openai-compatible/shop-llm' }, policy: POLICY, toolIds: [tool.id] });
  });
  afterAll(async () => {
    await modelApp?.close();
    await chat?.close();
  });
  beforeEach(() => {
    chat.requests.length = 0;
    business.secrets = [tool.secret];
  });
  afterEach(() => expect(chat.problems).toEqual([]));

  const toolMessages = (request: Record<string, any>) =>
    (request.messages as { role: string; content: string; tool_call_id?: string }[]).filter((message) => message.role === 'tool');

  it('is offered the tool, calls it, gets its answer as a tool message and answers with it; every request is one OpenAI takes', async () => {
    chat.answer = (request, n) =>
      n === 0
        ? { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'A1' } }] }
        : { content: `It arrives ${JSON.parse(toolMessages(request)[0]!.content).answer.eta}.` };
    const res = await org.rest.post(`/api/agents/${agentId}/test`, { message: 'Where is my order A1?' });
    expect(res.status).toBe(200);
    expect(res.body.response).toBe('It arrives Monday.');
    expect(chat.requests).toHaveLength(2);
    expect(chat.requests[0]!.tools).toEqual([
      { type: 'function', function: { name: 'lookup_order', description: 'Look up an order by its id', parameters: LOOKUP_PARAMETERS } },
    ]);
    const second = chat.requests[1]!;
    const assistant = second.messages.find((message: { role: string }) => message.role === 'assistant');
    expect(assistant.tool_calls[0].function).toEqual({ name: 'lookup_order', arguments: '{"orderId":"A1"}' });
    expect(toolMessages(second)[0]!.tool_call_id).toBe(assistant.tool_calls[0].id);
    expect(JSON.parse(toolMessages(second)[0]!.content)).toEqual({ status: 200, answer: { status: 'shipped', eta: 'Monday' } });
    expect(business.received).toHaveLength(1);
    expect(business.received[0]!.verifiedWith).toEqual([0]);
    // The hidden policy goes to the model only: not to the tool.
    expect(business.received[0]!.body).not.toContain('fifty dollars');
  });

  it('does not send arguments the model writes with the hidden policy in them, tells the model, and records none', async () => {
    const notes = await createTool(org, `${business.url}/notes`, {
      name: 'add_note',
      parameters: { type: 'object', properties: { note: { type: 'string' } } },
    });
    await org.rest.put(`/api/agents/${agentId}`, { toolIds: [tool.id, notes.id] });
    chat.answer = (_request, n) => (n === 0 ? { toolCalls: [{ name: 'add_note', arguments: { note: `Remember: ${POLICY}` } }] } : { content: 'Noted.' });
    const res = await org.rest.post(`/api/agents/${agentId}/test`, { message: 'Please note my refund request.' });
    expect(res.body.response).toBe('Noted.');
    expect(res.body.toolCalls).toEqual([expect.objectContaining({ tool: 'add_note', status: 'rejected', arguments: null })]);
    expect(JSON.parse(toolMessages(chat.requests[1]!)[0]!.content).error).toMatch(/hidden policy.*Nothing was sent/);
    expect(business.received).toHaveLength(0);
    expect(JSON.stringify(res.body)).not.toContain('fifty dollars');
    await org.rest.put(`/api/agents/${agentId}`, { toolIds: [tool.id] });
  });

  it('tells the model arguments it invents against the schema, sends nothing, and lets it correct them', async () => {
    chat.answer = (_request, n) =>
      n === 0
        ? { toolCalls: [{ name: 'lookup_order', arguments: { order: 1 } }] }
        : n === 1
          ? { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'B2' } }] }
          : { content: 'Found it.' };
    const res = await org.rest.post(`/api/agents/${agentId}/test`, { message: 'Where is B2?' });
    expect(res.body.response).toBe('Found it.');
    expect(res.body.toolCalls.map((call: { status: string }) => call.status)).toEqual(['rejected', 'succeeded']);
    expect(JSON.parse(toolMessages(chat.requests[1]!)[0]!.content).error).toMatch(/do not match the tool's parameters/);
    expect(business.received.map((request) => request.parsed.arguments)).toEqual([{ orderId: 'B2' }]);
  });

  it('bounds the steps: a model that calls tools for ever is stopped after TOOL_STEPS requests', async () => {
    chat.answer = () => ({ toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'C3' } }] });
    const res = await org.rest.post(`/api/agents/${agentId}/test`, { message: 'Loop' });
    expect(res.status).toBe(200);
    expect(chat.requests).toHaveLength(TOOL_STEPS);
    expect(res.body.toolCalls).toHaveLength(TOOL_STEPS);
  });

  it('is a double the official openai client reads: its tool call comes back parsed', async () => {
    chat.answer = () => ({ toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'D4' } }] });
    const client = new OpenAI({ baseURL: chat.url, apiKey: 'sk-compatible' });
    const completion = await client.chat.completions.create({
      model: 'shop-llm',
      messages: [{ role: 'user', content: 'Where is D4?' }],
      tools: [{ type: 'function', function: { name: 'lookup_order', description: 'x', parameters: LOOKUP_PARAMETERS } }],
    });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ orderId: 'D4' });
    // A request OpenAI would refuse (an unknown key) is refused by the double too.
    const refused = await fetch(`${chat.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', messages: [], tool_timeout: 5 }),
    });
    expect(refused.status).toBe(400);
    expect(chat.problems.splice(0)).toEqual([expect.stringContaining("'tool_timeout'")]);
  });
});
