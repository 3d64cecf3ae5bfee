import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallAnalysisDocument, ConversationAnalysisDocument, CreateAnalysisAgentDocument, UpdateAnalysisPlanDocument } from '../generated/graphql.js';
import { TEST_JWT_SECRET, type TestApp, type TestOrganization } from '../helpers/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { AnalysisWorker } from '../../src/modules/agents/analysis/analysis-worker.js';
import { createAudience } from '../programs/fixtures.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { drain, startWebhookApp, TestClock, worker } from '../webhooks/fixtures.js';
import { WebhookReceiver } from '../webhooks/receiver.js';
import { testRunner } from '../runner/fixtures.js';

/**
 * A loopback OpenAI-compatible server: a turn of the call is answered with text; a request for
 * structured output (it carries response_format) is answered with text that is not JSON, and counted.
 */
let double: Server;
const analysisRequests: Record<string, unknown>[] = [];

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  const structured = body.response_format !== undefined;
  if (structured) analysisRequests.push(body);
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: structured ? 'Sure! The caller wants Monday {' : 'We open at nine.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
  );
}

const PLAN = {
  summary: true,
  structuredData: {
    type: 'object',
    properties: {
      day: { type: 'string', enum: ['Monday', 'Tuesday', 'Wednesday'] },
      agreed: { type: 'boolean' },
      heard: { type: 'string', maxLength: 10 },
      visits: { type: 'integer', minimum: 1 },
      notes: { type: 'array', items: { type: 'string' } },
    },
    required: ['day', 'agreed'],
  },
};

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  double = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
  const providers = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: '/tmp/gateway-test-unused' }).providers;
  app = await startWebhookApp({ providers: { ...providers, openaiCompatibleBaseUrl: `http://127.0.0.1:${(double.address() as AddressInfo).port}/v1` } });
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(async () => {
  await app?.close();
  double.closeAllConnections();
  await new Promise((resolve) => double.close(resolve));
});

async function createAgent(org: TestOrganization, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await org.rest.post('/api/agents', {
    name: 'Ava',
    instructions: 'You book appointments.',
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'batch', voiceId: 'Polly.Matthew' },
    analysisPlan: PLAN,
    ...overrides,
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

interface CampaignCall {
  id: string;
  conversation_id: string;
}

/** An offline campaign (the simulator, every call answered, a scripted caller) of a single agent; answers its execution and calls. */
async function offlineCampaign(agentId: string, contacts: number): Promise<{ executionId: string; calls: CampaignCall[] }> {
  const audience = await createAudience(acme, contacts);
  const program = await acme.rest.post('/api/programs', {
    name: 'Analysed', kind: 'campaign', agentId, audienceId: audience.id, maxConcurrentCalls: 4,
    simulatedCaller: { utterances: ['Monday is fine.', 'Goodbye then'] },
  });
  expect(program.status).toBe(201);
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
  const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
  expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
  const dialer = new SimulatedDialer({ seed: 'analysis', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } });
  const runner = testRunner(app, { dialer, logger: createLogger('silent'), intervalMs: 10, conversations: app.gateway.services.conversations });
  runner.start();
  try {
    await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
  } finally {
    await runner.stop();
  }
  const calls = await app.sql<CampaignCall>('select id, conversation_id from calls where execution_id = ? order by queued_at', [execution.id]);
  return { executionId: execution.id, calls };
}

/** The call as REST shows it once its analysis is no longer pending. */
async function analyzedCall(callId: string, timeoutMs = 15_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const call = (await acme.rest.get(`/api/calls/${callId}`)).body;
    if (call.analysis && call.analysis.status !== 'pending') return call;
    if (Date.now() > until) throw new Error(`call not analysed in time: ${JSON.stringify(call.analysis)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Parses the CSV this test writes (no quoted commas in its cells). */
function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split('\r\n');
  const columns = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [columns[index]!, value])));
}

describe('an offline campaign with an analysis plan', () => {
  let executionId: string;
  let calls: CampaignCall[];
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    const endpoint = await acme.rest.post('/api/webhook-endpoints', { url: receiver.url, eventTypes: ['call.analyzed'] });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [endpoint.body.secret];
    ({ executionId, calls } = await offlineCampaign(await createAgent(acme), 3));
    expect(calls).toHaveLength(3);
  });
  afterAll(() => receiver.close());

  // builtin/echo fills the plan from the caller's lines: the summary and a free string are the first
  // line (heard cut to maxLength 10), the enum the value a caller said, the boolean true for "fine",
  // the integer its minimum (no number was said), the array empty.
  const EXPECTED = {
    status: 'completed',
    summary: 'Monday is fine.',
    data: { day: 'Monday', agreed: true, heard: 'Monday is ', visits: 1, notes: [] },
    error: null,
    model: 'builtin/echo',
  };

  it('fills summary and fields for every answered call, on the call and its conversation, on both doors', async () => {
    for (const call of calls) {
      const rest = await analyzedCall(call.id);
      expect(rest.analysis).toEqual({ ...EXPECTED, analyzedAt: expect.any(String) });
      expect(Date.parse(rest.analysis.analyzedAt)).toBeGreaterThanOrEqual(Date.parse(rest.endedAt));
      const conversation = (await acme.rest.get(`/api/conversations/${call.conversation_id}`)).body;
      expect(conversation.analysis).toEqual(rest.analysis);
      const { call: graphql } = await acme.graphql.ok(CallAnalysisDocument, { id: call.id });
      expect(graphql?.analysis).toEqual(rest.analysis);
      expect(graphql?.conversation?.analysis).toEqual(rest.analysis);
      const { conversation: byId } = await acme.graphql.ok(ConversationAnalysisDocument, { id: call.conversation_id });
      expect(byId?.analysis).toEqual(rest.analysis);
    }
  });

  it('flattens the analysis into the calls CSV, one column per top-level field', async () => {
    const res = await fetch(`${app.baseUrl}/api/executions/${executionId}/calls.csv`, { headers: { 'x-api-key': acme.apiKey } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.split('\r\n')[0]).toMatch(/,creditsCharged,analysisStatus,summary,data\.day,data\.agreed,data\.heard,data\.visits,data\.notes,analysisError$/);
    const rows = csvRows(text);
    expect(rows.map((row) => row.lastCallId).sort()).toEqual(calls.map((call) => call.id).sort());
    for (const row of rows) {
      expect(row).toMatchObject({ analysisStatus: 'completed', summary: 'Monday is fine.', 'data.day': 'Monday', 'data.agreed': 'true', 'data.heard': 'Monday is ', 'data.visits': '1', 'data.notes': '[]', analysisError: '' });
    }
  });

  it('writes call.analyzed once per call: in the events and signed to a subscribed webhook', async () => {
    const events = (await acme.rest.get('/api/events?type=call.analyzed&limit=100')).body.data as { payload: Record<string, any> }[];
    const mine = events.filter((event) => event.payload.executionId === executionId);
    expect(mine.map((event) => event.payload.id).sort()).toEqual(calls.map((call) => call.id).sort());
    for (const event of mine) expect(event.payload.analysis).toMatchObject(EXPECTED);

    const webhooks = worker(app, new TestClock());
    await drain(webhooks);
    const delivered = receiver.received.filter((request) => request.parsed.data.executionId === executionId);
    expect(delivered.map((request) => request.parsed.data.id).sort()).toEqual(calls.map((call) => call.id).sort());
    for (const request of delivered) {
      expect(request.verifiedWith).toEqual([0]);
      expect(request.parsed.type).toBe('call.analyzed');
      expect(request.parsed.data.analysis).toMatchObject(EXPECTED);
    }
  });

  it('an analysis left due (a restart, a claim whose worker died) is filled by a started worker’s tick', async () => {
    const [call] = calls;
    await app.sql(
      `update conversations set analysis = '{"status":"pending","summary":null,"data":null,"error":null,"model":null,"analyzedAt":null}'::jsonb,
              analysis_due_at = now() - interval '1 minute' where id = ?`,
      [call!.conversation_id],
    );
    await app.sql(`update calls set analysis = '{"status":"pending"}'::jsonb where id = ?`, [call!.id]);
    expect((await acme.rest.get(`/api/calls/${call!.id}`)).body.analysis.status).toBe('pending');
    const restarted = new AnalysisWorker({ em: app.db.database.em, model: app.gateway.services.models, intervalMs: 20 });
    restarted.start();
    try {
      expect((await analyzedCall(call!.id)).analysis).toMatchObject(EXPECTED);
    } finally {
      await restarted.stop();
    }
    expect(await app.sql('select analysis_due_at from conversations where id = ?', [call!.conversation_id])).toEqual([{ analysis_due_at: null }]);
  });

  it('another organization gets 404 for the analysed call, its conversation, its CSV and the agent, on both doors', async () => {
    const [call] = calls;
    expect((await other.rest.get(`/api/calls/${call!.id}`)).status).toBe(404);
    expect((await other.rest.get(`/api/conversations/${call!.conversation_id}`)).status).toBe(404);
    const csv = await fetch(`${app.baseUrl}/api/executions/${executionId}/calls.csv`, { headers: { 'x-api-key': other.apiKey } });
    expect(csv.status).toBe(404);
    expect((await other.graphql.run(CallAnalysisDocument, { id: call!.id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    expect((await other.graphql.run(ConversationAnalysisDocument, { id: call!.conversation_id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const agentId = (await acme.rest.get(`/api/calls/${call!.id}`)).body.agentId as string;
    expect((await other.rest.put(`/api/agents/${agentId}`, { analysisPlan: { summary: false } })).status).toBe(404);
    expect((await other.graphql.run(UpdateAnalysisPlanDocument, { id: agentId, input: { analysisPlan: { summary: false } } })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});

describe('analysis plans are checked when saved', () => {
  const object = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { type: 'string' } : object({ inner: nested(levels - 1) }));

  it.each([
    ['an unknown keyword', object({ day: { typ: 'string' } }), /unknown keyword: "typ"/],
    ['a bad type', object({ day: { type: 'strng' } }), /\/properties\/day\/type must be/],
    ['an unknown format', object({ day: { type: 'string', format: 'weekday' } }), /unknown format "weekday"/],
    ['a top level that is not an object', { type: 'string' }, /"type": "object" at its top level/],
    ['no properties', object({}), /1 to 50 properties/],
    ['a field name that is no identifier', object({ 'first name': { type: 'string' } }), /property "first name"/],
    ['a reference', object({ day: { $ref: '#/definitions/day' } }), /uses "\$ref"/],
    ['more than 5 levels', object({ a: nested(5) }), /nested 6 levels deep; at most 5/],
    ['more than 16 KB', object({ day: { type: 'string', description: 'x'.repeat(16_400) } }), /bytes of JSON; at most 16384/],
  ])('%s: the same 400 naming it on both doors', async (_name, structuredData, message) => {
    const input = { name: 'Bad', instructions: 'x', modelConfig: { model: 'builtin/echo' }, analysisPlan: { summary: true, structuredData } };
    const rest = await acme.rest.post('/api/agents', input);
    expect(rest.status).toBe(400);
    expect(rest.body.code).toBe('BAD_USER_INPUT');
    expect(rest.body.errors).toEqual([{ field: 'analysisPlan.structuredData', message: expect.stringMatching(message) }]);
    const graphql = await acme.graphql.run(CreateAnalysisAgentDocument, { input: input as never });
    expect(graphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(graphql.errors?.[0]?.extensions.errors).toEqual(rest.body.errors);
  });

  it('a good plan is stored and read on both doors; an update replaces it (the same check), null removes it', async () => {
    const { createAgent } = await acme.graphql.ok(CreateAnalysisAgentDocument, {
      input: { name: 'Good', instructions: 'x', modelConfig: { model: 'builtin/echo' }, analysisPlan: { structuredData: PLAN.structuredData } },
    });
    // summary is on unless said otherwise
    expect(createAgent.analysisPlan).toEqual({ summary: true, structuredData: PLAN.structuredData });
    expect((await acme.rest.get(`/api/agents/${createAgent.id}`)).body.analysisPlan).toEqual(createAgent.analysisPlan);
    const bad = await acme.rest.put(`/api/agents/${createAgent.id}`, { analysisPlan: { structuredData: object({ day: { typ: 'string' } }) } });
    expect(bad.status).toBe(400);
    expect((await acme.rest.get(`/api/agents/${createAgent.id}`)).body.version).toBe(1);
    const { updateAgent } = await acme.graphql.ok(UpdateAnalysisPlanDocument, { id: createAgent.id, input: { analysisPlan: { summary: false, structuredData: object({ day: { type: 'string' } }) } } });
    expect(updateAgent).toMatchObject({ version: 2, analysisPlan: { summary: false, structuredData: object({ day: { type: 'string' } }) } });
    const cleared = await acme.rest.put(`/api/agents/${createAgent.id}`, { analysisPlan: null });
    expect(cleared.body).toMatchObject({ version: 3, analysisPlan: null });
  });
});

describe('a model that answers outside the schema', () => {
  it('is asked once more, then the analysis is recorded as an error and nothing unvalidated is stored', async () => {
    analysisRequests.length = 0;
    const agentId = await createAgent(acme, { modelConfig: { model: 'openai-compatible/test-model' } });
    const { calls } = await offlineCampaign(agentId, 1);
    const call = await analyzedCall(calls[0]!.id);
    expect(call.analysis).toEqual({
      status: 'failed',
      summary: null,
      data: null,
      error: expect.stringMatching(/^The model answered outside the schema twice: the answer was not JSON/),
      model: 'openai-compatible/test-model',
      analyzedAt: expect.any(String),
    });
    // Exactly two structured requests: the first answer and the one retry.
    expect(analysisRequests).toHaveLength(2);
    expect(JSON.stringify(analysisRequests[0]!.messages)).toContain('Monday is fine.');
    const { call: graphql } = await acme.graphql.ok(CallAnalysisDocument, { id: call.id as string });
    expect(graphql?.analysis).toEqual(call.analysis);
    expect(graphql?.conversation?.analysis).toEqual(call.analysis);
  });
});
