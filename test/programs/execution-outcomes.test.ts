import { ExecutionOutcomesDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createFlow } from './fixtures.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { testRunner } from '../runner/fixtures.js';

// An execution's results say what happened: its finished contacts counted by the outcome of their
// last call (or why none was placed), the same on both doors, and agreeing with the calls themselves.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme outcomes');
  other = await app.organization('Other outcomes');
});
afterAll(() => app.close());

it('counts every finished contact by outcome, on both doors, as its last call ended', async () => {
  const audience = await createAudience(acme, 16, 2);
  const flowId = await createFlow(acme);
  const program = await acme.rest.post('/api/programs', {
    name: 'Outcomes',
    kind: 'campaign',
    flowId,
    audienceId: audience.id,
    maxConcurrentCalls: 8,
    retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 },
  });
  expect(program.status).toBe(201);
  expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
  const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
  expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
  const dialer = new SimulatedDialer({ seed: 'outcomes', speedMs: 0, weights: { answered: 2, voicemail: 2, no_answer: 1, busy: 1, failed: 1 } });
  const runner = testRunner(app, { dialer, logger: createLogger('silent'), intervalMs: 10 });
  runner.start();
  let rest: Record<string, any>;
  try {
    rest = await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
  } finally {
    await runner.stop();
  }
  // The last call of each contact, as the calls list says.
  const lastCalls = await app.sql<{ outcome: string }>(
    `select distinct on (execution_contact_id) outcome from calls where execution_id = ? order by execution_contact_id, attempt desc`,
    [execution.id],
  );
  const byOutcome = (name: string) => lastCalls.filter((call) => call.outcome === name).length;
  expect(rest!.outcomes).toEqual({
    answered: byOutcome('answered'),
    voicemail: byOutcome('voicemail'),
    // The flow has no voicemail node: a machine is hung up on, nothing left.
    voicemailLeft: 0,
    noAnswer: byOutcome('no_answer'),
    busy: byOutcome('busy'),
    failed: byOutcome('failed'),
    doNotCall: 0,
    notCalled: 0,
  });
  const { answered, voicemail, noAnswer, busy, failed, doNotCall, notCalled } = rest!.outcomes;
  // A voicemail connected: the contact is done, counted in contactsCompleted, and shown apart from the answered ones.
  expect(rest!.contactsCompleted).toBe(answered + voicemail);
  expect(rest!.contactsFailed).toBe(noAnswer + busy + failed + doNotCall + notCalled);
  // Every contact of the execution (the audience's two opted-out members were never in it).
  expect(answered + voicemail + noAnswer + busy + failed + notCalled).toBe(rest!.totalContacts);
  expect(rest!.totalContacts).toBe(14);
  expect(answered).toBeGreaterThan(0);
  expect(voicemail).toBeGreaterThan(0);
  const graphql = await acme.graphql.ok(ExecutionOutcomesDocument, { id: execution.id });
  expect(graphql.execution.outcomes).toEqual(rest!.outcomes);
  expect((await other.rest.get(`/api/executions/${execution.id}`)).status).toBe(404);
  expect((await other.graphql.run(ExecutionOutcomesDocument, { id: execution.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
}, 60_000);
