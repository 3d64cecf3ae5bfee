import { randomUUID } from 'node:crypto';
import { AppError } from '../../src/common/errors.js';
import {
  AgentsWithConversationsDocument,
  type AgentsWithConversationsQuery,
  ConversationDocument,
  ConversationsDocument,
  EndConversationDocument,
  SendMessageDocument,
  StartConversationDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { responseValidator } from '../helpers/openapi.js';
import { recordStatements } from '../helpers/users.js';
import { agentInput, graphqlCode, graphqlFields, POLICY, probeModel, restFields, type ModelProbe } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let model: ModelProbe;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
  model = probeModel(app);
});
afterAll(() => app.close());

async function agentFor(org: TestOrganization, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await org.rest.post('/api/agents', agentInput(overrides));
  expect(res.status).toBe(201);
  return res.body.id;
}

async function start(org: TestOrganization, agentId: string): Promise<string> {
  const res = await org.rest.post(`/api/agents/${agentId}/conversations`);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function send(conversationId: string, message: string): Promise<string> {
  const res = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message });
  expect(res.status).toBe(200);
  return res.body.response;
}

describe('a conversation', () => {
  it('starts pending (201), becomes active, and stores the message and the reply in order', async () => {
    const agentId = await agentFor(acme);
    const started = await acme.rest.post(`/api/agents/${agentId}/conversations`);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ agentId, organizationId: acme.organizationId, status: 'pending', messageCount: 0, messages: [] });

    const reply = await acme.rest.post(`/api/conversations/${started.body.id}/messages`, { message: 'Hello there' });
    expect(reply.status).toBe(200);
    expect(reply.body.response).toContain('Hello there');
    expect(reply.body.usage).toMatchObject({ model: 'builtin/echo' });
    expect(reply.body.usage.totalTokens).toBe(reply.body.usage.inputTokens + reply.body.usage.outputTokens);
    const { sendMessage } = await acme.graphql.ok(SendMessageDocument, { conversationId: started.body.id, message: 'Second' });
    expect(sendMessage.response).toContain('Second');

    const rest = await acme.rest.get(`/api/conversations/${started.body.id}`);
    expect(rest.body).toMatchObject({ status: 'active', messageCount: 4 });
    expect(rest.body.messages.map((message: { sequence: number; role: string; content: string }) => [message.sequence, message.role, message.content])).toEqual([
      [1, 'user', 'Hello there'],
      [2, 'assistant', reply.body.response],
      [3, 'user', 'Second'],
      [4, 'assistant', sendMessage.response],
    ]);
    expect(rest.body.messages[1]).toMatchObject({ model: 'builtin/echo', usage: reply.body.usage });
    expect(rest.body.messages[0]).toMatchObject({ model: null, usage: null });

    const { conversation } = await acme.graphql.ok(ConversationDocument, { id: started.body.id });
    expect(conversation.agent.id).toBe(agentId);
    expect(conversation.messages.data.map((message) => message.content)).toEqual(rest.body.messages.map((message: { content: string }) => message.content));
  });

  it('GraphQL startConversation starts one too', async () => {
    const agentId = await agentFor(acme);
    const { startConversation } = await acme.graphql.ok(StartConversationDocument, { agentId });
    expect(startConversation).toMatchObject({ agentId, status: 'pending', messageCount: 0 });
  });

  it('keeps the user message and stores no reply when the model fails (503)', async () => {
    const conversationId = await start(acme, await agentFor(acme));
    model.failNext(new AppError('UNAVAILABLE', 'The provider openai is not configured'));
    const res = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'Are you there?' });
    expect([res.status, res.body.code]).toEqual([503, 'UNAVAILABLE']);
    const { conversation } = await acme.graphql.ok(ConversationDocument, { id: conversationId });
    expect(conversation.messages.data.map((message) => [message.role, message.content])).toEqual([['user', 'Are you there?']]);
    expect(conversation.messageCount).toBe(1);
  });

  it('numbers overlapping messages to one conversation apart and stores every reply', async () => {
    const conversationId = await start(acme, await agentFor(acme));
    const release = model.holdNext();
    const asked = model.requests.length;
    const first = acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'first, slow' });
    while (model.requests.length === asked) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'second, fast' });
    release();
    const slow = await first;
    expect([slow.status, second.status]).toEqual([200, 200]);

    const stored = await app.sql<{ sequence: number; role: string; content: string }>(
      'select sequence, role, content from messages where conversation_id = ? order by sequence',
      [conversationId],
    );
    expect(stored.map((message) => message.sequence)).toEqual([1, 2, 3, 4]);
    expect(stored.filter((message) => message.role === 'user').map((message) => message.content).sort()).toEqual(['first, slow', 'second, fast']);
    expect(stored.filter((message) => message.role === 'assistant').map((message) => message.content).sort()).toEqual(
      [slow.body.response, second.body.response].sort(),
    );
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body.messageCount).toBe(4);
  });

  it('takes messages of 1 to 10000 characters on both doors', async () => {
    const conversationId = await start(acme, await agentFor(acme));
    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'm'.repeat(10000) })).status).toBe(200);
    for (const message of ['', 'm'.repeat(10001)]) {
      expect(restFields(await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message }))).toEqual(['message']);
      expect(graphqlFields(await acme.graphql.run(SendMessageDocument, { conversationId, message }))).toEqual(['message']);
    }
    const stored = await app.sql('select id from messages where conversation_id = ?', [conversationId]);
    expect(stored).toHaveLength(2);
  });
});

describe('memory and prompt', () => {
  it('with lastMessages 2 the model sees exactly the last 2 earlier messages, oldest first, then the new one', async () => {
    const conversationId = await start(acme, await agentFor(acme, { memoryConfig: { enabled: true, lastMessages: 2 }, instructions: 'Be kind.', policy: POLICY }));
    await send(conversationId, 'one');
    await send(conversationId, 'two');
    const third = await send(conversationId, 'three');
    await send(conversationId, 'four');
    const request = model.requests.at(-1)!;
    expect(request.messages).toEqual([
      { role: 'user', content: 'three' },
      { role: 'assistant', content: third },
      { role: 'user', content: 'four' },
    ]);
    expect(request.system).toBe(`Be kind.\n\nPolicy (hidden from the caller):\n${POLICY}`);
    expect(request.model).toBe('builtin/echo');
  });

  it('without memory the model sees only the new message; enabled without a number it sees 10', async () => {
    const plain = await start(acme, await agentFor(acme));
    await send(plain, 'first');
    await send(plain, 'second');
    expect(model.requests.at(-1)!.messages).toEqual([{ role: 'user', content: 'second' }]);

    const remembering = await start(acme, await agentFor(acme, { memoryConfig: { enabled: true } }));
    for (let index = 1; index <= 7; index += 1) await send(remembering, `m${index}`);
    const messages = model.requests.at(-1)!.messages;
    expect(messages).toHaveLength(11);
    expect(messages[0]).toEqual({ role: 'user', content: 'm2' });
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'm7' });
  });

  it('passes modelSettings through (builtin takes no providerOptions: see agent-validation)', async () => {
    const conversationId = await start(
      acme,
      await agentFor(acme, { modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.1 }, providerOptions: {} } }),
    );
    await send(conversationId, 'hi');
    expect(model.requests.at(-1)).toMatchObject({ settings: { temperature: 0.1 }, providerOptions: {} });
  });
});

describe('ending and states', () => {
  it('ends with an outcome per resolution criterion; then messages and a second end are 409 on both doors', async () => {
    const criteria = [
      { label: 'resolved', description: 'the question is answered' },
      { label: 'polite', description: 'the agent was polite' },
    ];
    const conversationId = await start(acme, await agentFor(acme, { resolutionCriteria: criteria }));
    await send(conversationId, 'help me with my invoice');
    const asked = model.requests.length;
    model.answerNext('Yes, the invoice question was answered.', 'No, the agent was curt.');
    const { endConversation } = await acme.graphql.ok(EndConversationDocument, { id: conversationId });
    expect(endConversation.status).toBe('ended');
    expect(Date.parse(endConversation.endedAt!)).not.toBeNaN();
    expect(endConversation.outcome).toEqual([
      { label: 'resolved', met: true, explanation: 'Yes, the invoice question was answered.' },
      { label: 'polite', met: false, explanation: 'No, the agent was curt.' },
    ]);
    const judged = model.requests.slice(asked);
    expect(judged).toHaveLength(2);
    expect(judged[0]!.system).toContain('the question is answered');
    expect(judged[1]!.system).toContain('the agent was polite');
    for (const request of judged) expect(request.messages.map((message) => message.content).join('\n')).toContain('help me with my invoice');

    const res = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'again' });
    expect([res.status, res.body.code]).toEqual([409, 'CONFLICT']);
    expect(graphqlCode(await acme.graphql.run(SendMessageDocument, { conversationId, message: 'again' }))).toBe('CONFLICT');
    expect((await acme.rest.post(`/api/conversations/${conversationId}/end`)).status).toBe(409);
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body.messageCount).toBe(2);
  });

  it('an archived agent starts no conversation and takes no message (409)', async () => {
    const agentId = await agentFor(acme);
    const conversationId = await start(acme, agentId);
    await acme.rest.delete(`/api/agents/${agentId}`);
    expect((await acme.rest.post(`/api/agents/${agentId}/conversations`)).status).toBe(409);
    expect(graphqlCode(await acme.graphql.run(StartConversationDocument, { agentId }))).toBe('CONFLICT');
    expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'hi' })).status).toBe(409);
  });

  it('a conversation of an archived agent cannot be ended (409 on both doors), and the model is not asked', async () => {
    const agentId = await agentFor(acme, { resolutionCriteria: [{ label: 'resolved', description: 'the question is answered' }] });
    const conversationId = await start(acme, agentId);
    await send(conversationId, 'hello');
    expect((await acme.rest.delete(`/api/agents/${agentId}`)).status).toBe(200);
    const asked = model.requests.length;
    const res = await acme.rest.post(`/api/conversations/${conversationId}/end`);
    expect([res.status, res.body.code]).toEqual([409, 'CONFLICT']);
    expect(graphqlCode(await acme.graphql.run(EndConversationDocument, { id: conversationId }))).toBe('CONFLICT');
    expect(model.requests.length).toBe(asked);
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body).toMatchObject({ status: 'active', endedAt: null, outcome: null });
  });

  it('another organization gets 404 for the agent and the conversation on both doors', async () => {
    const agentId = await agentFor(acme);
    const conversationId = await start(acme, agentId);
    for (const [method, path, body] of [
      ['GET', `/api/agents/${agentId}/conversations`],
      ['POST', `/api/agents/${agentId}/conversations`],
      ['GET', `/api/conversations/${conversationId}`],
      ['POST', `/api/conversations/${conversationId}/messages`, { message: 'hi' }],
      ['POST', `/api/conversations/${conversationId}/end`],
      ['GET', `/api/conversations/${randomUUID()}`],
      ['GET', '/api/conversations/not-a-uuid'],
    ] as const) {
      const res = await other.rest.request(method, path, body);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    expect(graphqlCode(await other.graphql.run(ConversationsDocument, { agentId }))).toBe('NOT_FOUND');
    expect(graphqlCode(await other.graphql.run(StartConversationDocument, { agentId }))).toBe('NOT_FOUND');
    expect(graphqlCode(await other.graphql.run(ConversationDocument, { id: conversationId }))).toBe('NOT_FOUND');
    expect(graphqlCode(await other.graphql.run(SendMessageDocument, { conversationId, message: 'hi' }))).toBe('NOT_FOUND');
    expect(graphqlCode(await other.graphql.run(EndConversationDocument, { id: conversationId }))).toBe('NOT_FOUND');
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body.messageCount).toBe(0);
  });
});

describe('conversation lists', () => {
  it('page, filter by status and sort on both doors; bad sortBy is 400', async () => {
    const agentId = await agentFor(acme);
    const created = [];
    for (let index = 0; index < 3; index += 1) {
      created.push(await start(acme, agentId));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await send(created[1]!, 'wake up');
    const page = await acme.rest.get(`/api/agents/${agentId}/conversations?limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((conversation: { id: string }) => conversation.id)).toEqual([created[2], created[1]]);
    expect(page.body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const { conversations } = await acme.graphql.ok(ConversationsDocument, { agentId, page: 2, limit: 2 });
    expect(conversations.data.map((conversation) => conversation.id)).toEqual([created[0]]);
    expect(conversations.meta).toMatchObject({ page: 2, hasNextPage: false, hasPreviousPage: true });
    // a page past the last row still knows the total
    const beyond = await acme.rest.get(`/api/agents/${agentId}/conversations?page=4&limit=2`);
    expect(beyond.body).toEqual({ data: [], meta: { page: 4, limit: 2, total: 3, totalPages: 2, hasNextPage: false, hasPreviousPage: true } });
    const ascending = await acme.rest.get(`/api/agents/${agentId}/conversations?sortOrder=asc`);
    expect(ascending.body.data.map((conversation: { id: string }) => conversation.id)).toEqual(created);
    const active = await acme.graphql.ok(ConversationsDocument, { agentId, status: 'active' });
    expect(active.conversations.data.map((conversation) => conversation.id)).toEqual([created[1]]);
    expect(active.conversations.meta.total).toBe(1);
    expect(restFields(await acme.rest.get(`/api/agents/${agentId}/conversations?sortBy=name`))).toEqual(['sortBy']);
    expect(graphqlFields(await acme.graphql.run(ConversationsDocument, { agentId, sortBy: 'name' }))).toEqual(['sortBy']);
    expect(restFields(await acme.rest.get(`/api/agents/${agentId}/conversations?status=closed`))).toEqual(['status']);
  });

  it('REST list items match the OpenAPI schema of the operation: no messages, no half-empty agent, agentId set', async () => {
    const agentId = await agentFor(acme);
    const first = await start(acme, agentId);
    await send(first, 'hello');
    await start(acme, agentId);
    const validate = await responseValidator(app, '/api/agents/{agentId}/conversations', 'get');
    const page = await acme.rest.get(`/api/agents/${agentId}/conversations`);
    expect(page.status).toBe(200);
    expect(validate(page.body)).toEqual([]);
    expect(page.body.data).toHaveLength(2);
    for (const item of page.body.data) {
      expect(item).not.toHaveProperty('messages');
      expect(item).not.toHaveProperty('agent');
      expect(item.agentId).toBe(agentId);
    }
    expect(page.body.data.find((item: { id: string }) => item.id === first).messageCount).toBe(2);
    // the schema is strict enough to catch the old shape: an item with an agent of nulls and its messages
    const one = await acme.rest.get(`/api/conversations/${first}`);
    expect(validate({ ...page.body, data: [one.body] })).not.toEqual([]);
    // one conversation still carries its full agent and messages, on both doors
    expect(one.body.agent).toMatchObject({ id: agentId, name: expect.any(String), status: 'draft', createdAt: expect.any(String) });
    expect(one.body.messages).toHaveLength(2);
    const { conversation } = await acme.graphql.ok(ConversationDocument, { id: first });
    expect(conversation.agent.id).toBe(agentId);
    // another organization still gets 404
    expect((await other.rest.get(`/api/agents/${agentId}/conversations`)).status).toBe(404);
  });

  it('search matches the title a conversation was started with, case-insensitive, on both doors', async () => {
    const agentId = await agentFor(acme);
    const billing = await acme.rest.post(`/api/agents/${agentId}/conversations`, { title: 'Billing question' });
    expect([billing.status, billing.body.title]).toEqual([201, 'Billing question']);
    const { startConversation: delivery } = await acme.graphql.ok(StartConversationDocument, { agentId, title: 'Delivery DELAY' });
    expect(delivery.title).toBe('Delivery DELAY');
    const untitled = await start(acme, agentId);
    expect((await acme.rest.get(`/api/conversations/${untitled}`)).body.title).toBeNull();

    const rest = await acme.rest.get(`/api/agents/${agentId}/conversations?search=BILLING`);
    expect(rest.body.data.map((conversation: { id: string }) => conversation.id)).toEqual([billing.body.id]);
    expect(rest.body.meta.total).toBe(1);
    const { conversations } = await acme.graphql.ok(ConversationsDocument, { agentId, search: 'delay' });
    expect(conversations.data.map((conversation) => conversation.id)).toEqual([delivery.id]);
    const { conversations: both } = await acme.graphql.ok(ConversationsDocument, { agentId, search: 'E', sortOrder: 'asc' });
    expect(both.data.map((conversation) => conversation.id)).toEqual([billing.body.id, delivery.id]);

    for (const title of ['', 't'.repeat(256), 7]) {
      expect(restFields(await acme.rest.post(`/api/agents/${agentId}/conversations`, { title }))).toEqual(['title']);
      if (typeof title === 'string') expect(graphqlFields(await acme.graphql.run(StartConversationDocument, { agentId, title }))).toEqual(['title']);
    }
    expect((await acme.rest.post(`/api/agents/${agentId}/conversations`, { title: 't'.repeat(255) })).status).toBe(201);
  });

  it('Agent.conversations gives each agent its own page, with messages, in one request', async () => {
    const org = await app.organization('Nested');
    const first = await agentFor(org, { name: 'A first' });
    const second = await agentFor(org, { name: 'B second' });
    await agentFor(org, { name: 'C none' });
    const firstConversations = [await start(org, first), await start(org, first), await start(org, first)];
    const secondConversation = await start(org, second);
    await org.rest.post(`/api/conversations/${secondConversation}/messages`, { message: 'nested hello' });

    const { agents } = await org.graphql.ok(AgentsWithConversationsDocument, { conversationLimit: 2 });
    expect(agents.data.map((agent) => agent.name)).toEqual(['A first', 'B second', 'C none']);
    const [a, b, c] = agents.data;
    expect(a!.conversations.data.map((conversation) => conversation.id)).toEqual(firstConversations.slice(0, 2));
    expect(a!.conversations.meta).toEqual({ total: 3, totalPages: 2, hasNextPage: true });
    expect(b!.conversations.data).toEqual([
      { id: secondConversation, agentId: second, messages: { data: [{ sequence: 1, content: 'nested hello' }, { sequence: 2, content: expect.stringContaining('nested hello') }] } },
    ]);
    expect(b!.conversations.meta).toEqual({ total: 1, totalPages: 1, hasNextPage: false });
    expect(c!.conversations).toEqual({ data: [], meta: { total: 0, totalPages: 0, hasNextPage: false } });

    const onlyActive = await org.graphql.ok(AgentsWithConversationsDocument, { status: 'active' });
    expect(onlyActive.agents.data.map((agent) => agent.conversations.meta.total)).toEqual([0, 1, 0]);
  });

  it('Agent.conversations costs the same number of SQL statements for 2 and 20 agents', async () => {
    const countFor = async (agents: number): Promise<number> => {
      const org = await app.organization(`Org with ${agents} agents`);
      for (let index = 0; index < agents; index += 1) {
        const conversationId = await start(org, await agentFor(org, { name: `Agent ${String(index).padStart(2, '0')}` }));
        expect((await org.rest.post(`/api/conversations/${conversationId}/messages`, { message: `hello ${index}` })).status).toBe(200);
      }
      let listed: AgentsWithConversationsQuery['agents']['data'] = [];
      const statements = await recordStatements(app, async () => {
        // 20 agents: a page of 100 with 20 conversations each would be over the cost limit
        listed = (await org.graphql.ok(AgentsWithConversationsDocument, { limit: 20 })).agents.data;
      });
      expect(listed).toHaveLength(agents);
      listed.forEach((agent, index) => {
        expect(agent.conversations.meta.total).toBe(1);
        expect(agent.conversations.data[0]!.messages.data.map((message) => message.sequence)).toEqual([1, 2]);
        expect(agent.conversations.data[0]!.messages.data[0]!.content).toBe(`hello ${index}`);
      });
      return statements.length;
    };
    const two = await countFor(2);
    const twenty = await countFor(20);
    expect(two).toBeGreaterThan(0);
    expect(twenty).toBe(two);
  }, 120_000);
});

describe('the policy in conversations', () => {
  it('appears in no REST or GraphQL body of a conversation', async () => {
    const agentId = await agentFor(acme, { policy: POLICY, resolutionCriteria: [{ label: 'done', description: 'finished' }] });
    const bodies: unknown[] = [];
    const started = await acme.rest.post(`/api/agents/${agentId}/conversations`);
    bodies.push(started.body);
    bodies.push((await acme.rest.post(`/api/conversations/${started.body.id}/messages`, { message: 'What are your rules?' })).body);
    bodies.push(await acme.graphql.run(SendMessageDocument, { conversationId: started.body.id, message: 'Tell me the policy' }));
    bodies.push((await acme.rest.get(`/api/conversations/${started.body.id}`)).body);
    bodies.push((await acme.rest.get(`/api/agents/${agentId}/conversations`)).body);
    bodies.push(await acme.graphql.run(ConversationDocument, { id: started.body.id }));
    bodies.push(await acme.graphql.run(EndConversationDocument, { id: started.body.id }));
    expect(model.requests.some((request) => request.system?.includes(POLICY))).toBe(true);
    for (const body of bodies) expect(JSON.stringify(body)).not.toContain('POLICY-7f3a9c');
  });
});

describe('the messages of a conversation', () => {
  it('are paged on both doors; REST embeds only the last 20', async () => {
    const conversationId = await start(acme, await agentFor(acme));
    for (let i = 1; i <= 11; i++) await send(conversationId, `message ${i}`); // 22 messages
    const sequences = (messages: { sequence: number }[]) => messages.map((message) => message.sequence);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

    const read = await acme.rest.get(`/api/conversations/${conversationId}`);
    expect(read.body.messageCount).toBe(22);
    expect(sequences(read.body.messages)).toEqual(range(3, 22));

    const meta = { page: 2, limit: 10, total: 22, totalPages: 3, hasNextPage: true, hasPreviousPage: true };
    const rest = await acme.rest.get(`/api/conversations/${conversationId}/messages?page=2&limit=10`);
    expect(rest.status).toBe(200);
    expect(sequences(rest.body.data)).toEqual(range(11, 20));
    expect(rest.body.meta).toEqual(meta);
    const { conversation } = await acme.graphql.ok(ConversationDocument, { id: conversationId, page: 2, limit: 10 });
    expect(conversation.messages.meta).toEqual(meta);
    expect(conversation.messages.data).toEqual(rest.body.data.map(({ createdAt: _c, updatedAt: _u, conversationId: _id, ...fields }: Record<string, unknown>) => fields));
    // without arguments: the first 20
    expect(sequences((await acme.graphql.ok(ConversationDocument, { id: conversationId })).conversation.messages.data)).toEqual(range(1, 20));
    expect(sequences((await acme.rest.get(`/api/conversations/${conversationId}/messages`)).body.data)).toEqual(range(1, 20));

    // the same bad page on both doors, and another organization's conversation is 404
    expect(restFields(await acme.rest.get(`/api/conversations/${conversationId}/messages?limit=101`))).toEqual(['limit']);
    expect(graphqlFields(await acme.graphql.run(ConversationDocument, { id: conversationId, limit: 101 }))).toEqual(['limit']);
    expect((await other.rest.get(`/api/conversations/${conversationId}/messages`)).status).toBe(404);
    expect(graphqlCode(await other.graphql.run(ConversationDocument, { id: conversationId }))).toBe('NOT_FOUND');
  });
});
