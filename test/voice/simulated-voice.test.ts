import { createLogger } from '../../src/common/logger.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { DEFAULT_UTTERANCES } from '../../src/modules/voice/simulated-caller.js';
import { CreateSimulatedProgramDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience } from '../programs/fixtures.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { createVoiceAgent, messagesOf } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app?.close());

async function offlineCampaign(simulatedCaller: { utterances: string[] } | undefined, contacts: number, flowId?: string) {
  const agentId = await createVoiceAgent(acme);
  const flow = flowId ? { status: 201, body: { id: flowId } } : await acme.rest.post('/api/call-flows', {
    name: 'Offline',
    nodes: [
      { id: 'start', type: 'start' },
      { id: 'greet', type: 'say', label: 'Hello from Acme.' },
      { id: 'ask', type: 'ask', agentId, label: 'Can you come on Monday?' },
      { id: 'desk', type: 'transfer', transferTo: '+14155550100' },
      { id: 'end', type: 'end' },
    ],
    edges: [
      { from: 'start', to: 'greet' },
      { from: 'greet', to: 'ask' },
      { from: 'ask', to: 'desk', condition: 'digit:0' },
      { from: 'ask', to: 'end', condition: 'said:goodbye' },
    ],
  });
  expect(flow.status).toBe(201);
  const audience = await createAudience(acme, contacts);
  const program = await acme.rest.post('/api/programs', {
    name: 'Offline voice', kind: 'campaign', flowId: flow.body.id, audienceId: audience.id, maxConcurrentCalls: 4,
    ...(simulatedCaller ? { simulatedCaller } : {}),
  });
  expect(program.status).toBe(201);
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
  const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
  expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
  // Every call answered by a person, so every contact talks.
  const dialer = new SimulatedDialer({ seed: 'voice', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } });
  const runner = new CampaignRunner({ em: app.db.database.em, dialer, logger: createLogger('silent'), intervalMs: 10, conversations: app.gateway.services.conversations });
  runner.start();
  try {
    await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
  } finally {
    await runner.stop();
  }
  return app.sql<{ id: string; status: string; reached_node_ids: string[]; conversation_id: string | null }>(
    'select id, status, reached_node_ids, conversation_id from calls where execution_id = ?',
    [execution.id],
  );
}

describe('an offline voice campaign', () => {
  it('the simulated caller says the program’s lines to the builtin agent: real transcripts, nodes walked as talked', async () => {
    const calls = await offlineCampaign({ utterances: ['Monday is fine.', 'Goodbye then'] }, 3);
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call).toMatchObject({ status: 'completed', reached_node_ids: ['start', 'greet', 'ask', 'end'] });
      const messages = await messagesOf(app, call.conversation_id!);
      expect(messages.map((message) => `${message.role}: ${message.content}`)).toEqual([
        'user: Monday is fine.',
        'assistant: Echo: Monday is fine.',
        'user: Goodbye then',
        'assistant: Echo: Goodbye then',
      ]);
      expect((await acme.rest.get(`/api/conversations/${call.conversation_id}`)).body).toMatchObject({ status: 'ended', callId: call.id });
    }
  });

  it('keys only are pressed as DTMF; without lines the seeded defaults are said', async () => {
    const [pressed] = await offlineCampaign({ utterances: ['0'] }, 1);
    expect(pressed!.reached_node_ids).toEqual(['start', 'greet', 'ask', 'desk']);
    const [seeded] = await offlineCampaign(undefined, 1);
    const said = (await messagesOf(app, seeded!.conversation_id!)).filter((message) => message.role === 'user').map((message) => message.content);
    expect(said).toEqual(DEFAULT_UTTERANCES.slice(0, said.length));
    expect(said.length).toBeGreaterThan(1);
  });

  it('resolved and unresolved edges follow the agent’s resolution criteria, judged after its answer', async () => {
    const agentId = await createVoiceAgent(acme, { resolutionCriteria: [{ label: 'Moved', description: 'The appointment was moved' }] });
    const flow = await acme.rest.post('/api/call-flows', {
      name: 'Judged',
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'ask', type: 'ask', agentId, label: 'What can I do?' },
        { id: 'done', type: 'say', label: 'Great.' },
        { id: 'retry', type: 'say', label: 'Let me get someone.' },
      ],
      edges: [{ from: 'start', to: 'ask' }, { from: 'ask', to: 'done', condition: 'resolved' }, { from: 'ask', to: 'retry', condition: 'unresolved' }],
    });
    expect(flow.status).toBe(201);
    // builtin/echo answers the judge with "Echo: …", never "yes": unresolved.
    const calls = await offlineCampaign({ utterances: ['Please move it'] }, 1, flow.body.id);
    expect(calls[0]!.reached_node_ids).toEqual(['start', 'ask', 'retry']);
  });

  it('simulatedCaller is read and checked on both doors', async () => {
    const audience = await createAudience(acme, 1);
    const agentId = await createVoiceAgent(acme);
    const input = { name: 'P', kind: 'campaign', agentId, audienceId: audience.id, simulatedCaller: { utterances: ['Hi'] } };
    const { createProgram } = await acme.graphql.ok(CreateSimulatedProgramDocument, { input: input as never });
    expect(createProgram.simulatedCaller).toEqual({ utterances: ['Hi'] });
    expect((await acme.rest.get(`/api/programs/${createProgram.id}`)).body.simulatedCaller).toEqual({ utterances: ['Hi'] });
    for (const utterances of [[], [''], Array.from({ length: 21 }, () => 'x'), ['x'.repeat(501)]]) {
      const bad = { ...input, simulatedCaller: { utterances } };
      const rest = await acme.rest.post('/api/programs', bad);
      expect(rest.status).toBe(400);
      expect(rest.body.errors[0].field).toMatch(/^simulatedCaller\.utterances/);
      const graphql = await acme.graphql.run(CreateSimulatedProgramDocument, { input: bad as never });
      expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    }
  });
});
