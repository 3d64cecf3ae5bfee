import { randomUUID } from 'node:crypto';
import { CreateAgentDocument, SendMessageDocument, TestAgentDocument, UpdateAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { agentInput, graphqlCode, graphqlFields, restFields } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

const text = (length: number) => 'x'.repeat(length);
const criteria = (count: number) => Array.from({ length: count }, (_, index) => ({ label: `c${index}`, description: 'met when' }));

const BAD_SETTINGS = { temperature: 'hot', bogus: 1 };
const SETTINGS_FIELDS = ['modelConfig.modelSettings.temperature', 'modelConfig.modelSettings.bogus'];
// Issue 9, finding 6: these reached the upstream request as they were.
const EXPENSIVE = { openaiCompatible: { model: 'very-expensive-model', n: 64, max_tokens: 999_999 } };
const EXPENSIVE_FIELDS = ['model', 'n', 'max_tokens'].map((option) => `modelConfig.providerOptions.openaiCompatible.${option}`);

/** Sends the same body to both doors: both accept it, or both refuse it naming the same fields. */
async function bothDoors(input: Record<string, unknown>, fields: string[] | 'ok') {
  const rest = await acme.rest.post('/api/agents', input);
  const graphql = await acme.graphql.run(CreateAgentDocument, { input: input as never });
  if (fields === 'ok') {
    expect(rest.status).toBe(201);
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data?.createAgent.status).toBe('draft');
    return;
  }
  expect(restFields(rest)).toEqual(fields);
  expect(graphqlFields(graphql)).toEqual(fields);
}

describe('limits of CreateAgentInput, at their edges, the same on both doors', () => {
  it.each([
    ['name of 128', { name: text(128) }, 'ok'],
    ['name of 129', { name: text(129) }, ['name']],
    ['empty name', { name: '' }, ['name']],
    ['description of 2000', { description: text(2000) }, 'ok'],
    ['description of 2001', { description: text(2001) }, ['description']],
    ['instructions of 10000', { instructions: text(10000) }, 'ok'],
    ['instructions of 10001', { instructions: text(10001) }, ['instructions']],
    ['policy of 10000', { policy: text(10000) }, 'ok'],
    ['policy of 10001', { policy: text(10001) }, ['policy']],
    ['5 resolution criteria', { resolutionCriteria: criteria(5) }, 'ok'],
    ['6 resolution criteria', { resolutionCriteria: criteria(6) }, ['resolutionCriteria']],
    ['criterion label of 101', { resolutionCriteria: [{ label: text(101), description: '' }] }, ['resolutionCriteria.0.label']],
    ['criterion description of 1001', { resolutionCriteria: [{ label: 'ok', description: text(1001) }] }, ['resolutionCriteria.0.description']],
    ['model without provider', { modelConfig: { model: 'gpt4' } }, ['modelConfig.model']],
    ['known modelSettings', { modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.5, maxTokens: 100 } } }, 'ok'],
    ['bad and unknown modelSettings', { modelConfig: { model: 'builtin/echo', modelSettings: BAD_SETTINGS } }, SETTINGS_FIELDS],
    ['maxOutputTokens of 16384', { modelConfig: { model: 'builtin/echo', modelSettings: { maxOutputTokens: 16_384 } } }, 'ok'],
    ['maxOutputTokens of 16385', { modelConfig: { model: 'builtin/echo', modelSettings: { maxOutputTokens: 16_385 } } }, ['modelConfig.modelSettings.maxOutputTokens']],
    ['maxTokens of 1,000,000', { modelConfig: { model: 'openai/gpt-4o-mini', modelSettings: { maxTokens: 1_000_000 } } }, ['modelConfig.modelSettings.maxTokens']],
    ['allow-listed openaiCompatible options', { modelConfig: { model: 'openai-compatible/llama3', providerOptions: { openaiCompatible: { user: 'caller-1', reasoningEffort: 'low' } } } }, 'ok'],
    ['openaiCompatible options naming another model and more output', { modelConfig: { model: 'openai-compatible/llama3', providerOptions: EXPENSIVE } }, EXPENSIVE_FIELDS],
    ['openai options outside the allow-list', { modelConfig: { model: 'openai/gpt-4o-mini', providerOptions: { openai: { maxCompletionTokens: 999_999, reasoningEffort: 'max' } } } }, ['modelConfig.providerOptions.openai.maxCompletionTokens', 'modelConfig.providerOptions.openai.reasoningEffort']],
    ["another provider's options", { modelConfig: { model: 'anthropic/claude-sonnet-4-5', providerOptions: { openaiCompatible: { user: 'x' } } } }, ['modelConfig.providerOptions.openaiCompatible']],
    ['provider options for the builtin model', { modelConfig: { model: 'builtin/echo', providerOptions: { seed: 7 } } }, ['modelConfig.providerOptions.seed']],
    ['unknown pipelineMode', { voiceConfig: { pipelineMode: 'loud' } }, ['voiceConfig.pipelineMode']],
    ['known pipelineMode and stsProvider', { voiceConfig: { pipelineMode: 'sts', stsProvider: 'google', voiceId: 'v1' } }, 'ok'],
    ['unknown stsProvider', { voiceConfig: { pipelineMode: 'sts', stsProvider: 'acme' } }, ['voiceConfig.stsProvider']],
    ['lastMessages of 100', { memoryConfig: { enabled: true, lastMessages: 100 } }, 'ok'],
    ['lastMessages of 101', { memoryConfig: { enabled: true, lastMessages: 101 } }, ['memoryConfig.lastMessages']],
    ['metadata that is not an object', { metadata: 'x' }, ['metadata']],
    ['knowledgeBaseId that is not a UUID', { knowledgeBaseConfig: { knowledgeBaseId: 'kb-1' } }, ['knowledgeBaseConfig.knowledgeBaseId']],
    ['topK of 21', { knowledgeBaseConfig: { knowledgeBaseId: randomUUID(), topK: 21 } }, ['knowledgeBaseConfig.topK']],
  ] as const)('%s', async (_name, overrides, fields) => {
    await bothDoors(agentInput(overrides), fields as string[] | 'ok');
  });

  it('requires modelConfig on REST (GraphQL declares it non-null)', async () => {
    const { modelConfig: _modelConfig, ...input } = agentInput();
    expect(restFields(await acme.rest.post('/api/agents', input))).toEqual(['modelConfig']);
  });

  it('answers 404 for a knowledge base the organization does not have, on both doors', async () => {
    const input = agentInput({ knowledgeBaseConfig: { knowledgeBaseId: randomUUID() } });
    const rest = await acme.rest.post('/api/agents', input);
    expect(rest.status).toBe(404);
    expect(rest.body.code).toBe('NOT_FOUND');
    expect(graphqlCode(await acme.graphql.run(CreateAgentDocument, { input: input as never }))).toBe('NOT_FOUND');
  });

  it('stores nothing for a refused body', async () => {
    await acme.rest.post('/api/agents', agentInput({ name: 'refused', policy: text(10001) }));
    expect(await app.sql('select id from agents where name = ?', ['refused'])).toHaveLength(0);
  });
});

describe('modelSettings', () => {
  it('are refused by an update on both doors, and the agent stays as it was', async () => {
    const agentId = (await acme.rest.post('/api/agents', agentInput())).body.id;
    const modelConfig = { model: 'builtin/echo', modelSettings: BAD_SETTINGS };
    expect(restFields(await acme.rest.put(`/api/agents/${agentId}`, { modelConfig }))).toEqual(SETTINGS_FIELDS);
    expect(graphqlFields(await acme.graphql.run(UpdateAgentDocument, { id: agentId, input: { modelConfig } as never }))).toEqual(SETTINGS_FIELDS);
    expect((await acme.rest.get(`/api/agents/${agentId}`)).body).toMatchObject({ version: 1, modelConfig: { modelSettings: null } });
  });

  it('providerOptions outside the allow-list are refused by an update on both doors; another organization gets 404', async () => {
    const agentId = (await acme.rest.post('/api/agents', agentInput())).body.id;
    const modelConfig = { model: 'openai-compatible/llama3', providerOptions: EXPENSIVE };
    const rest = await acme.rest.put(`/api/agents/${agentId}`, { modelConfig });
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(restFields(rest)).toEqual(EXPENSIVE_FIELDS);
    const graphql = await acme.graphql.run(UpdateAgentDocument, { id: agentId, input: { modelConfig } as never });
    expect(graphqlCode(graphql)).toBe('BAD_USER_INPUT');
    expect(graphqlFields(graphql)).toEqual(EXPENSIVE_FIELDS);
    expect((await acme.rest.get(`/api/agents/${agentId}`)).body).toMatchObject({ version: 1, modelConfig: { model: 'builtin/echo', providerOptions: null } });

    const globex = await app.organization('Globex');
    expect((await globex.rest.put(`/api/agents/${agentId}`, { modelConfig })).status).toBe(404);
    expect(graphqlCode(await globex.graphql.run(UpdateAgentDocument, { id: agentId, input: { modelConfig } as never }))).toBe('NOT_FOUND');
  });

  it('stored providerOptions outside the allow-list (from before this check) are refused before a test asks anything', async () => {
    const agentId = (await acme.rest.post('/api/agents', agentInput())).body.id;
    await app.sql('update agents set model_config = ? where id = ?', [JSON.stringify({ model: 'builtin/echo', providerOptions: { seed: 7 } }), agentId]);
    expect(restFields(await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'hi' }))).toEqual(['modelConfig.providerOptions.seed']);
    expect(graphqlFields(await acme.graphql.run(TestAgentDocument, { id: agentId, message: 'hi' }))).toEqual(['modelConfig.providerOptions.seed']);
  });

  it('stored bad (from before this check) are refused before a message or a test stores or asks anything', async () => {
    const agentId = (await acme.rest.post('/api/agents', agentInput())).body.id;
    const conversationId = (await acme.rest.post(`/api/agents/${agentId}/conversations`)).body.id;
    await app.sql('update agents set model_config = ? where id = ?', [JSON.stringify({ model: 'builtin/echo', modelSettings: BAD_SETTINGS }), agentId]);
    // jsonb keeps its own key order, so the stored settings' fields are compared as a set
    const sorted = (fields: string[]) => [...fields].sort();
    expect(sorted(restFields(await acme.rest.post(`/api/conversations/${conversationId}/messages`, { message: 'hi' })))).toEqual(sorted(SETTINGS_FIELDS));
    expect(sorted(graphqlFields(await acme.graphql.run(SendMessageDocument, { conversationId, message: 'hi' })))).toEqual(sorted(SETTINGS_FIELDS));
    expect(sorted(restFields(await acme.rest.post(`/api/agents/${agentId}/test`, { message: 'hi' })))).toEqual(sorted(SETTINGS_FIELDS));
    expect(sorted(graphqlFields(await acme.graphql.run(TestAgentDocument, { id: agentId, message: 'hi' })))).toEqual(sorted(SETTINGS_FIELDS));
    expect(await app.sql('select id from messages where conversation_id = ?', [conversationId])).toHaveLength(0);
    expect((await acme.rest.get(`/api/conversations/${conversationId}`)).body).toMatchObject({ status: 'pending', messageCount: 0 });
  });
});
