import { randomUUID } from 'node:crypto';
import {
  ActivateAgentDocument,
  AgentDocument,
  AgentsDocument,
  CreateAgentDocument,
  DeleteAgentDocument,
  TestAgentDocument,
  UpdateAgentDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
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

async function createAgent(overrides: Record<string, unknown> = {}) {
  const res = await acme.rest.post('/api/agents', agentInput(overrides));
  expect(res.status).toBe(201);
  return res.body;
}

describe('creating and reading an agent', () => {
  it('REST answers 201 with a draft at version 1, created by the caller, without the policy', async () => {
    const res = await acme.rest.post(
      '/api/agents',
      agentInput({
        policy: POLICY,
        description: 'Front desk',
        voiceConfig: { pipelineMode: 'streaming', voiceId: 'alloy' },
        memoryConfig: { enabled: true, lastMessages: 4 },
        metadata: { team: 'support', tier: 2 },
        modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.2 } },
        resolutionCriteria: [{ label: 'resolved', description: 'the customer is helped' }],
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Support',
      description: 'Front desk',
      status: 'draft',
      version: 1,
      organizationId: acme.organizationId,
      createdBy: acme.userId,
      hasPolicy: true,
      deletedAt: null,
      metadata: { team: 'support', tier: 2 },
      modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.2 }, providerOptions: null },
      voiceConfig: { pipelineMode: 'streaming', voiceId: 'alloy', stsProvider: null },
      memoryConfig: { enabled: true, lastMessages: 4, semanticRecall: null },
      resolutionCriteria: [{ label: 'resolved', description: 'the customer is helped' }],
    });
    expect(res.body).not.toHaveProperty('policy');
    expect(JSON.stringify(res.body)).not.toContain(POLICY);
    const rows = await app.sql<{ policy: string }>('select policy from agents where id = ?', [res.body.id]);
    expect(rows[0]!.policy).toBe(POLICY);

    const fetched = await acme.rest.get(`/api/agents/${res.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(res.body);
  });

  it('GraphQL creates the same agent, and the agent query reads it', async () => {
    const { createAgent } = await acme.graphql.ok(CreateAgentDocument, {
      input: { ...agentInput({ policy: POLICY }), voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' } },
    });
    expect(createAgent).toMatchObject({ status: 'draft', version: 1, hasPolicy: true, createdBy: acme.userId });
    expect(createAgent.voiceConfig).toEqual({ pipelineMode: 'sts', stsProvider: 'openai', voiceId: null });
    const { agent } = await acme.graphql.ok(AgentDocument, { id: createAgent.id });
    expect(agent).toEqual(createAgent);
    const rest = await acme.rest.get(`/api/agents/${createAgent.id}`);
    expect(rest.body.status).toBe('draft');
  });

  it('another organization, an unknown id and a non-UUID are 404 on both doors', async () => {
    const agent = await createAgent();
    for (const id of [agent.id, randomUUID(), 'not-a-uuid']) {
      const client = id === agent.id ? other : acme;
      for (const [method, path, body] of [
        ['GET', `/api/agents/${id}`],
        ['PUT', `/api/agents/${id}`, { name: 'x' }],
        ['POST', `/api/agents/${id}/activate`],
        ['DELETE', `/api/agents/${id}`],
        ['POST', `/api/agents/${id}/test`, { message: 'hi' }],
      ] as const) {
        const res = await client.rest.request(method, path, body);
        expect([path, res.status, res.body.code]).toEqual([path, 404, 'NOT_FOUND']);
      }
      expect(graphqlCode(await client.graphql.run(AgentDocument, { id }))).toBe('NOT_FOUND');
      expect(graphqlCode(await client.graphql.run(UpdateAgentDocument, { id, input: { name: 'x' } }))).toBe('NOT_FOUND');
      expect(graphqlCode(await client.graphql.run(ActivateAgentDocument, { id }))).toBe('NOT_FOUND');
      expect(graphqlCode(await client.graphql.run(DeleteAgentDocument, { id }))).toBe('NOT_FOUND');
      expect(graphqlCode(await client.graphql.run(TestAgentDocument, { id, message: 'hi' }))).toBe('NOT_FOUND');
    }
    expect((await acme.rest.get(`/api/agents/${agent.id}`)).body.status).toBe('draft');
  });
});

describe('updating an agent', () => {
  it('changes only the fields sent and bumps the version by one each time, on both doors', async () => {
    const agent = await createAgent({ description: 'kept', metadata: { a: 1 } });
    const { updateAgent } = await acme.graphql.ok(UpdateAgentDocument, { id: agent.id, input: { name: 'Renamed' } });
    expect(updateAgent).toMatchObject({ name: 'Renamed', description: 'kept', metadata: { a: 1 }, version: 2 });
    const second = await acme.graphql.ok(UpdateAgentDocument, { id: agent.id, input: { description: null, policy: POLICY } });
    expect(second.updateAgent).toMatchObject({ name: 'Renamed', description: null, version: 3, hasPolicy: true });
    const rest = await acme.rest.put(`/api/agents/${agent.id}`, { memoryConfig: { enabled: true } });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ version: 4, memoryConfig: { enabled: true, lastMessages: 10 } });
    expect(JSON.stringify(rest.body)).not.toContain(POLICY);
  });

  it('answers the default lastMessages (10) when memory is sent without it, on both doors', async () => {
    const created = await acme.graphql.ok(CreateAgentDocument, {
      input: { name: 'Memory default', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' }, memoryConfig: { enabled: true } },
    });
    expect(created.createAgent.memoryConfig).toMatchObject({ enabled: true, lastMessages: 10 });
    const rest = await acme.rest.post('/api/agents', { name: 'Memory default', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' }, memoryConfig: { enabled: false } });
    expect(rest.status).toBe(201);
    expect(rest.body.memoryConfig).toEqual({ enabled: false, lastMessages: 10, semanticRecall: null });
    const read = await acme.graphql.ok(AgentDocument, { id: rest.body.id });
    expect(read.agent?.memoryConfig).toMatchObject({ lastMessages: 10 });
  });

  it('refuses the same bad update on both doors', async () => {
    const agent = await createAgent();
    const input = { name: 'x'.repeat(129), modelConfig: { model: 'nope' } };
    expect(restFields(await acme.rest.put(`/api/agents/${agent.id}`, input))).toEqual(['name']);
    expect(graphqlFields(await acme.graphql.run(UpdateAgentDocument, { id: agent.id, input }))).toEqual(['name']);
    expect(graphqlFields(await acme.graphql.run(UpdateAgentDocument, { id: agent.id, input: { modelConfig: { model: 'nope' } } }))).toEqual([
      'modelConfig.model',
    ]);
    expect((await acme.rest.get(`/api/agents/${agent.id}`)).body.version).toBe(1);
  });
});

describe('activation', () => {
  it('draft → active once; again, or from archived, is 409 on both doors', async () => {
    const rest = await createAgent();
    const activated = await acme.rest.post(`/api/agents/${rest.id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body).toMatchObject({ id: rest.id, status: 'active' });
    const again = await acme.rest.post(`/api/agents/${rest.id}/activate`);
    expect([again.status, again.body.code]).toEqual([409, 'CONFLICT']);
    expect(graphqlCode(await acme.graphql.run(ActivateAgentDocument, { id: rest.id }))).toBe('CONFLICT');

    const gql = await createAgent();
    expect((await acme.graphql.ok(ActivateAgentDocument, { id: gql.id })).activateAgent.status).toBe('active');
    const archived = await createAgent();
    await acme.rest.delete(`/api/agents/${archived.id}`);
    expect((await acme.rest.post(`/api/agents/${archived.id}/activate`)).status).toBe(409);
    expect(graphqlCode(await acme.graphql.run(ActivateAgentDocument, { id: archived.id }))).toBe('CONFLICT');
    expect((await acme.rest.get(`/api/agents/${archived.id}`)).body.status).toBe('archived');
  });
});

describe('soft delete', () => {
  it('archives the agent, keeps the row with deleted_at, and answers the same agent when deleted again', async () => {
    const agent = await createAgent({ name: 'Doomed' });
    const res = await acme.rest.delete(`/api/agents/${agent.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: agent.id, name: 'Doomed', status: 'archived' });
    expect(Date.parse(res.body.deletedAt)).not.toBeNaN();
    const rows = await app.sql<{ status: string; deleted_at: Date | null }>('select status, deleted_at from agents where id = ?', [agent.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('archived');
    expect(rows[0]!.deleted_at).not.toBeNull();

    const again = await acme.graphql.ok(DeleteAgentDocument, { id: agent.id });
    expect(again.deleteAgent).toEqual({ id: agent.id, status: 'archived', deletedAt: res.body.deletedAt });
  });

  it('an archived agent cannot be tested or updated (409)', async () => {
    const agent = await createAgent();
    await acme.graphql.ok(DeleteAgentDocument, { id: agent.id });
    expect((await acme.rest.post(`/api/agents/${agent.id}/test`, { message: 'hi' })).status).toBe(409);
    expect(graphqlCode(await acme.graphql.run(TestAgentDocument, { id: agent.id, message: 'hi' }))).toBe('CONFLICT');
    expect(graphqlCode(await acme.graphql.run(UpdateAgentDocument, { id: agent.id, input: { name: 'back' } }))).toBe('CONFLICT');
  });
});

describe('testing an agent', () => {
  it('reports the same usage whatever the length of the policy, on both doors (issue 9, finding 9)', async () => {
    const longPolicy = Array.from({ length: 40 }, (_, index) => `Rule ${index}: never discuss topic ${index}.`).join(' ');
    const usages = [];
    for (const policy of [null, 'No refunds.', longPolicy]) {
      const agent = await createAgent({ policy, instructions: 'Be brief.' });
      const rest = await acme.rest.post(`/api/agents/${agent.id}/test`, { message: 'Where is my order?' });
      expect(rest.status).toBe(200);
      const { testAgent } = await acme.graphql.ok(TestAgentDocument, { id: agent.id, message: 'Where is my order?' });
      expect(testAgent.usage).toEqual(rest.body.usage);
      usages.push(rest.body.usage);
    }
    // "Be brief." + "Where is my order?": 2 + 4 words; the model did see the policy
    expect(usages).toEqual(Array(3).fill({ inputTokens: 6, outputTokens: 5, totalTokens: 11, model: 'builtin/echo' }));
    expect(model.requests.at(-1)!.system).toContain(longPolicy);
  });

  it('redacts each sentence of the policy however it is cased or spaced, short ones too, on both doors', async () => {
    const agent = await createAgent({ policy: `No refunds ever. ${POLICY}.` });
    const shouted = `Sure: NO   REFUNDS\nEVER. And ${POLICY.toUpperCase().replaceAll(' ', '  ')}! ok?`;
    const rest = await acme.rest.post(`/api/agents/${agent.id}/test`, { message: shouted });
    expect(rest.status).toBe(200);
    expect(rest.body.response).toBe('Echo: Sure: [redacted]. And [redacted]! ok?');
    const { testAgent } = await acme.graphql.ok(TestAgentDocument, { id: agent.id, message: shouted });
    expect(testAgent.response).toBe(rest.body.response);
  });

  it('answers {response, usage} with instructions and policy given to the model, nothing stored, policy never shown', async () => {
    const agent = await createAgent({ policy: POLICY, instructions: 'Be brief.' });
    const res = await acme.rest.post(`/api/agents/${agent.id}/test`, { message: 'Where is my order?' });
    expect(res.status).toBe(200);
    expect(res.body.response).toContain('Where is my order?');
    const { usage } = res.body;
    expect(usage.model).toBe('builtin/echo');
    expect(usage.totalTokens).toBe(usage.inputTokens + usage.outputTokens);
    expect(usage.outputTokens).toBeGreaterThan(0);
    const request = model.requests.at(-1)!;
    expect(request.system).toBe(`Be brief.\n\nPolicy (hidden from the caller):\n${POLICY}`);
    expect(request.messages).toEqual([{ role: 'user', content: 'Where is my order?' }]);
    expect(JSON.stringify(res.body)).not.toContain(POLICY);
    expect(await app.sql('select id from conversations where agent_id = ?', [agent.id])).toHaveLength(0);

    const { testAgent } = await acme.graphql.ok(TestAgentDocument, { id: agent.id, message: 'hello' });
    expect(testAgent.usage.model).toBe('builtin/echo');
    expect(testAgent.response).toContain('hello');
  });

  it('redacts the policy when a reply quotes it', async () => {
    const agent = await createAgent({ policy: POLICY });
    const res = await acme.rest.post(`/api/agents/${agent.id}/test`, { message: `Repeat: ${POLICY}` });
    expect(res.status).toBe(200);
    expect(res.body.response).not.toContain(POLICY);
    expect(res.body.response).toContain('[redacted]');
  });

  it('takes messages of 1 to 10000 characters on both doors', async () => {
    const agent = await createAgent();
    expect((await acme.rest.post(`/api/agents/${agent.id}/test`, { message: 'y'.repeat(10000) })).status).toBe(200);
    expect((await acme.graphql.run(TestAgentDocument, { id: agent.id, message: 'y'.repeat(10000) })).errors).toBeUndefined();
    for (const message of ['', 'y'.repeat(10001)]) {
      expect(restFields(await acme.rest.post(`/api/agents/${agent.id}/test`, { message }))).toEqual(['message']);
      expect(graphqlFields(await acme.graphql.run(TestAgentDocument, { id: agent.id, message }))).toEqual(['message']);
    }
    expect(restFields(await acme.rest.post(`/api/agents/${agent.id}/test`, {}))).toEqual(['message']);
  });
});

describe('the policy is never shown', () => {
  it('appears in no REST or GraphQL body of agent create, get, list, update, activate and delete', async () => {
    const bodies: unknown[] = [];
    const created = await acme.rest.post('/api/agents', agentInput({ name: 'Secretive', policy: POLICY }));
    bodies.push(created.body);
    bodies.push((await acme.rest.get(`/api/agents/${created.body.id}`)).body);
    bodies.push((await acme.rest.get('/api/agents?search=Secretive')).body);
    bodies.push((await acme.rest.put(`/api/agents/${created.body.id}`, { policy: `${POLICY} v2` })).body);
    bodies.push((await acme.rest.post(`/api/agents/${created.body.id}/activate`)).body);
    bodies.push(await acme.graphql.run(AgentDocument, { id: created.body.id }));
    bodies.push(await acme.graphql.run(AgentsDocument, { search: 'Secretive', status: 'active' }));
    bodies.push(await acme.graphql.run(CreateAgentDocument, { input: agentInput({ policy: POLICY }) }));
    bodies.push((await acme.rest.delete(`/api/agents/${created.body.id}`)).body);
    bodies.push((await acme.rest.get('/api/agents?status=archived')).body);
    expect(JSON.stringify(bodies)).toContain('Secretive');
    for (const body of bodies) expect(JSON.stringify(body)).not.toContain('POLICY-7f3a9c');
  });
});
