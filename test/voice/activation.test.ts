import { ActivateProgramDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { createVoiceAgent } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

async function draftProgram(target: { agentId?: string; flowId?: string }): Promise<string> {
  const audience = await createAudience(acme, 1);
  const program = await acme.rest.post('/api/programs', { name: 'P', kind: 'campaign', audienceId: audience.id, ...target });
  expect(program.status).toBe(201);
  return program.body.id;
}

async function flowSpokenBy(agentId: string): Promise<string> {
  const flow = await acme.rest.post('/api/call-flows', {
    name: 'Ask',
    nodes: [{ id: 'start', type: 'start' }, { id: 'q', type: 'ask', agentId, label: 'How can I help?' }],
    edges: [{ from: 'start', to: 'q' }],
  });
  expect(flow.status).toBe(201);
  return flow.body.id;
}

/** Activation refused with 409 on both doors (two drafts, as the first door's success would change the second's answer), naming the agent and the mode. */
async function refusedOnBothDoors(target: () => Promise<{ agentId?: string; flowId?: string }>, agentId: string, mode: RegExp) {
  const rest = await acme.rest.post(`/api/programs/${await draftProgram(await target())}/activate`);
  expect(rest.status).toBe(409);
  expect(rest.body.code).toBe('CONFLICT');
  expect(rest.body.detail).toContain(agentId);
  expect(rest.body.detail).toMatch(mode);
  const graphql = await acme.graphql.run(ActivateProgramDocument, { id: await draftProgram(await target()) });
  expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
  expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
}

describe('activation refuses voice pipelines that are not implemented', () => {
  it('a single agent in streaming mode: 409 naming the agent and the mode', async () => {
    const agentId = await createVoiceAgent(acme, { name: 'Streamer', voiceConfig: { pipelineMode: 'streaming', voiceId: 'alloy' } });
    await refusedOnBothDoors(async () => ({ agentId }), agentId, /agent "Streamer" .* pipelineMode streaming/);
  });

  it('a flow whose ask node speaks sts through a provider other than openai: 409', async () => {
    const agentId = await createVoiceAgent(acme, { name: 'Gemini', voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' } });
    await refusedOnBothDoors(async () => ({ flowId: await flowSpokenBy(agentId) }), agentId, /pipelineMode sts with stsProvider google/);
  });

  it('batch, and sts with openai, are activated', async () => {
    const batch = await createVoiceAgent(acme);
    const realtime = await createVoiceAgent(acme, { voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' } });
    expect((await acme.rest.post(`/api/programs/${await draftProgram({ agentId: batch })}/activate`)).status).toBe(200);
    const { activateProgram } = await acme.graphql.ok(ActivateProgramDocument, { id: await draftProgram({ flowId: await flowSpokenBy(realtime) }) });
    expect(activateProgram.status).toBe('active');
  });
});
