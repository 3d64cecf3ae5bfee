import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageDocument, TestAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { agentInput, graphqlCode, POLICY } from './fixtures.js';

// Agent Studio end to end: real provider path through a fake OpenAI-compatible server on
// loopback, and knowledge-base passages reaching the prompt, over both doors.

interface ChatRequest {
  model: string;
  temperature?: number;
  messages: { role: string; content: string }[];
}

let fake: Server;
let failing = false;
const received: ChatRequest[] = [];

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
  received.push(body);
  res.setHeader('content-type', 'application/json');
  if (failing) return void res.writeHead(500).end(JSON.stringify({ error: { message: `leaked prompt: ${JSON.stringify(body)}` } }));
  res.end(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: `Reply ${received.length}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 },
    }),
  );
}

let app: TestApp;
let acme: TestOrganization;
let knowledgeBaseId: string;

beforeAll(async () => {
  fake = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1`;
  app = await startTestApp({ providers: { openaiCompatibleBaseUrl: baseUrl } });
  acme = await app.organization('Acme');
  const base = await acme.rest.post('/api/knowledge-bases', { name: 'Help centre' });
  knowledgeBaseId = base.body.id;
  for (const [title, content] of [
    ['Opening hours', 'Our shop opens at nine in the morning and closes at six in the evening.'],
    ['Returns', 'Parcels can be returned within thirty days with the receipt.'],
    ['Delivery', 'Delivery to the islands takes five working days.'],
  ]) {
    expect((await acme.rest.post(`/api/knowledge-bases/${knowledgeBaseId}/documents`, { title, content })).status).toBe(201);
  }
});
afterAll(async () => {
  await app.close();
  fake.closeAllConnections();
  await new Promise((resolve) => fake.close(resolve));
});
beforeEach(() => {
  failing = false;
  received.length = 0;
});

async function conversationWith(overrides: Record<string, unknown>): Promise<{ agentId: string; conversationId: string }> {
  const agent = await acme.rest.post('/api/agents', agentInput(overrides));
  expect(agent.status).toBe(201);
  const conversation = await acme.rest.post(`/api/agents/${agent.body.id}/conversations`);
  return { agentId: agent.body.id, conversationId: conversation.body.id };
}

describe('a real provider (OpenAI-compatible, on loopback)', () => {
  it('receives the model, the temperature, and instructions → policy → passages → memory → message', async () => {
    const { conversationId } = await conversationWith({
      instructions: 'You are the shop assistant.',
      policy: POLICY,
      modelConfig: { model: 'openai-compatible/shop-llm:8b', modelSettings: { temperature: 0.3 } },
      memoryConfig: { enabled: true, lastMessages: 2 },
      knowledgeBaseConfig: { knowledgeBaseId, topK: 1, similarityThreshold: 0 },
    });
    for (const message of ['Hello', 'Do you deliver?']) {
      expect((await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message })).status).toBe(200);
    }
    const res = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'When does the shop open in the morning?' });
    expect(res.status).toBe(200);
    const last = received[2]!;
    // The fake counts 40 prompt tokens; the policy's share of the prompt's characters is left out of the usage.
    const hidden = `\n\nPolicy (hidden from the caller):\n${POLICY}`.length;
    const prompt = last.messages.reduce((sum, message) => sum + message.content.length, 0);
    const inputTokens = 40 - Math.round((40 * hidden) / prompt);
    expect(inputTokens).toBeLessThan(40);
    expect(res.body).toEqual({ response: 'Reply 3', usage: { inputTokens, outputTokens: 2, totalTokens: inputTokens + 2, model: 'openai-compatible/shop-llm:8b' } });

    expect(last.model).toBe('shop-llm:8b');
    expect(last.temperature).toBe(0.3);
    const [system, ...rest] = last.messages;
    expect(system!.role).toBe('system');
    const order = ['You are the shop assistant.', POLICY, 'opens at nine'].map((part) => system!.content.indexOf(part));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(system!.content).not.toContain('thirty days');
    expect(rest).toEqual([
      { role: 'user', content: 'Do you deliver?' },
      { role: 'assistant', content: 'Reply 2' },
      { role: 'user', content: 'When does the shop open in the morning?' },
    ]);
  });

  it('a failing provider answers 503 UNAVAILABLE on both doors, keeps the user message, stores no reply, leaks nothing', async () => {
    const { agentId, conversationId } = await conversationWith({ policy: POLICY, modelConfig: { model: 'openai-compatible/shop-llm' } });
    failing = true;
    const rest = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'Anyone?' });
    expect(rest.status).toBe(503);
    expect(rest.body.code).toBe('UNAVAILABLE');
    expect(rest.headers.get('retry-after')).toBeTruthy();
    expect(JSON.stringify(rest.body)).not.toContain(POLICY);
    const gql = await acme.graphql.run(SendMessageDocument, { conversationId, message: 'Still there?' });
    expect(graphqlCode(gql)).toBe('UNAVAILABLE');
    expect(JSON.stringify(gql)).not.toContain(POLICY);
    expect(graphqlCode(await acme.graphql.run(TestAgentDocument, { id: agentId, message: 'Test' }))).toBe('UNAVAILABLE');

    const conversation = await acme.rest.get(`/api/conversations/${conversationId}`);
    expect(conversation.body.messages.map((message: { role: string; content: string }) => [message.role, message.content])).toEqual([
      ['user', 'Anyone?'],
      ['user', 'Still there?'],
    ]);
  });

  it('a named provider that is not configured answers 503 with a clear message', async () => {
    const { conversationId } = await conversationWith({ modelConfig: { model: 'anthropic/claude-test' } });
    const res = await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'Hi' });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/anthropic.*not configured.*ANTHROPIC_API_KEY/);
    expect(received).toHaveLength(0);
  });
});

describe('the builtin extractive model over a knowledge base', () => {
  it('answers with the passage that matches, honours the threshold, and keeps answering once the base is deleted', async () => {
    const base = await acme.rest.post('/api/knowledge-bases', { name: 'Short-lived' });
    await acme.rest.post(`/api/knowledge-bases/${base.body.id}/documents`, { title: 'Returns', content: 'Parcels can be returned within thirty days with the receipt.' });
    const extractive = { modelConfig: { model: 'builtin/extractive' } };
    const { agentId } = await conversationWith({ ...extractive, knowledgeBaseConfig: { knowledgeBaseId: base.body.id, topK: 3, similarityThreshold: 0 } });

    const answer = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'Can parcels be returned?' });
    expect(answer.status).toBe(200);
    expect(answer.body.response).toContain('thirty days');

    const strict = await conversationWith({ ...extractive, knowledgeBaseConfig: { knowledgeBaseId: base.body.id, topK: 3, similarityThreshold: 0.99 } });
    const none = await acme.rest.post(`/api/agents/${strict.agentId}/test`, { message: 'Can parcels be returned?' });
    expect(none.body.response).not.toContain('thirty days');

    expect((await acme.rest.delete(`/api/knowledge-bases/${base.body.id}`)).status).toBe(204);
    const after = await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'Can parcels be returned?' });
    expect(after.status).toBe(200);
    expect(after.body.response).not.toContain('thirty days');
    expect(after.body.response).toBe(none.body.response);
  });
});
