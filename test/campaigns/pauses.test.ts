import { CampaignExecutionDocument, CreditLedgerDocument, ResumeExecutionDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, creditBalance, loggedErrors, logs, readExecution, tickUntil } from './fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(loggedErrors()).toEqual([]);
  logs.length = 0;
});

async function runningExecution(org: TestOrganization, programId: string): Promise<string> {
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  expect((await org.rest.post(`/api/executions/${created.body.id}/start`)).body.status).toBe('running');
  return created.body.id;
}

/** Ticks that change nothing: the paused execution is left alone. */
async function expectIdle(runner: ReturnType<typeof buildRunner>['runner'], read: () => Promise<unknown>) {
  const before = await read();
  for (let i = 0; i < 3; i++) {
    await runner.tick();
    await runner.idle();
  }
  expect(await read()).toEqual(before);
}

it('credits: fewer credits than contacts → paused_no_credits on both doors; more credits and a resume complete it', async () => {
  const org = await app.organization();
  const { programId } = await buildCampaign(org, 10, { maxConcurrentCalls: 2 });
  expect(await creditBalance(org)).toBe(0);
  await addCredits(org, 4);
  const id = await runningExecution(org, programId);
  const read = () => readExecution(org, programId, id);
  const { runner } = buildRunner(app, { seed: 'e2e-credits', weights: ALWAYS_ANSWERED });

  const paused = await tickUntil(runner, read, (execution) => execution.status === 'paused_no_credits' && execution.contactsInProgress === 0);
  expect(paused).toMatchObject({ contactsCompleted: 4, contactsPending: 6, contactsFailed: 0 });
  const { execution } = await org.graphql.ok(CampaignExecutionDocument, { id });
  expect(execution).toMatchObject({ status: 'paused_no_credits', creditsSpent: 4, contactsPending: 6 });
  expect(await creditBalance(org)).toBe(0);
  await expectIdle(runner, read);

  // A resume with no credits is refused (it would only pause again at once): semantics.test.ts.
  expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(409);
  expect(await read()).toMatchObject({ status: 'paused_no_credits', contactsCompleted: 4, contactsPending: 6 });

  expect(await addCredits(org, 10)).toBe(10);
  expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
  const end = await tickUntil(runner, read, (each) => each.status === 'completed');
  expect(end).toMatchObject({ contactsCompleted: 10, contactsPending: 0, contactsInProgress: 0 });
  expect(end.actualEndAt).not.toBeNull();
  expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.creditsSpent).toBe(10);
  expect(await creditBalance(org)).toBe(4);

  // The ledger has both grants and every credit the runner took, for this execution, on both doors.
  const ledger = await org.rest.get('/api/organization/credit-ledger?limit=100');
  expect(ledger.status).toBe(200);
  const entries = ledger.body.data as { kind: string; amount: number; balanceAfter: number; executionId: string | null }[];
  expect(entries.filter((entry) => entry.kind === 'grant').map((entry) => entry.amount)).toEqual([10, 4]);
  const spends = entries.filter((entry) => entry.kind === 'spend');
  expect(spends.reduce((sum, entry) => sum + entry.amount, 0)).toBe(-10);
  expect(spends.every((entry) => entry.executionId === id && entry.amount < 0)).toBe(true);
  expect(Math.min(...spends.map((entry) => entry.balanceAfter))).toBe(0);
  const { creditLedger } = await org.graphql.ok(CreditLedgerDocument, { limit: 100 });
  expect(creditLedger).toEqual(ledger.body);
});

it('threshold: paused_threshold once two contacts reached "say"; each resume restarts the count', async () => {
  const org = await app.organization();
  const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
  const { programId } = await buildCampaign(org, 5, { maxConcurrentCalls: 1, autoPauseRules: [rule] });
  await addCredits(org, 50);
  const id = await runningExecution(org, programId);
  const read = () => readExecution(org, programId, id);
  const { runner } = buildRunner(app, { seed: 'e2e-threshold', weights: ALWAYS_ANSWERED });

  const first = await tickUntil(runner, read, (execution) => execution.status === 'paused_threshold');
  expect(first).toMatchObject({ contactsCompleted: 2, contactsPending: 3, contactsInProgress: 0 });
  expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.status).toBe('paused_threshold');
  await expectIdle(runner, read);
  // paused_threshold is already a pause: pausing again is refused.
  expect((await org.rest.post(`/api/executions/${id}/pause`)).status).toBe(409);

  expect((await org.rest.post(`/api/executions/${id}/resume`)).body.status).toBe('running');
  const second = await tickUntil(runner, read, (execution) => execution.status !== 'running');
  expect(second).toMatchObject({ status: 'paused_threshold', contactsCompleted: 4, contactsPending: 1 });

  expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
  // The last contact reaches "say" once: below the threshold, and nothing is left, so completed.
  const end = await tickUntil(runner, read, (execution) => execution.status !== 'running');
  expect(end).toMatchObject({ status: 'completed', contactsCompleted: 5, contactsPending: 0 });
  expect(await creditBalance(org)).toBe(45);
});

it('threshold without resetOnResume: the count goes on, so the next contact at the node pauses again', async () => {
  const org = await app.organization();
  const { programId } = await buildCampaign(org, 6, { maxConcurrentCalls: 1, autoPauseRules: [{ nodeId: 'say', threshold: 2, resetOnResume: false }] });
  await addCredits(org, 50);
  const id = await runningExecution(org, programId);
  const read = () => readExecution(org, programId, id);
  const { runner } = buildRunner(app, { seed: 'e2e-threshold-2', weights: ALWAYS_ANSWERED });
  await tickUntil(runner, read, (execution) => execution.status === 'paused_threshold');
  await org.rest.post(`/api/executions/${id}/resume`);
  const again = await tickUntil(runner, read, (execution) => execution.status !== 'running');
  expect(again).toMatchObject({ status: 'paused_threshold', contactsCompleted: 3, contactsPending: 3 });
});
