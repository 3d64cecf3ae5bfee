import {
  CampaignCreditsDocument,
  CampaignExecutionDocument,
  CreditLedgerDocument,
  DeleteProgramDocument,
  PauseExecutionDocument,
  ResumeExecutionDocument,
  StartExecutionDocument,
} from '../generated/graphql.js';
import { createLogger } from '../../src/common/logger.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import type { Dialer } from '../../src/modules/programs/runner/dialer.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ALWAYS_ANSWERED, addCredits, buildCampaign, buildRunner, clock, creditBalance, loggedErrors, logs, readExecution, tickUntil } from './fixtures.js';

// The campaign semantics README › Campaigns › "Campaign semantics" writes down, each on both doors.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(loggedErrors()).toEqual([]);
  logs.length = 0;
});

async function scheduledExecution(org: TestOrganization, programId: string): Promise<string> {
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect([created.status, created.body.status]).toEqual([201, 'scheduled']);
  return created.body.id;
}

async function expectNoCreditConflict(org: TestOrganization, id: string, action: 'start' | 'resume', waiting: number) {
  const rest = await org.rest.post(`/api/executions/${id}/${action}`);
  expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
  expect(rest.body.detail).toContain(`has 0 credits`);
  expect(rest.body.detail).toContain(`${waiting} contact`);
  expect(rest.body.detail).toContain('npm run cli -- credits:add');
  const graphql = action === 'start' ? await org.graphql.run(StartExecutionDocument, { id }) : await org.graphql.run(ResumeExecutionDocument, { id });
  expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
  expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
}

it('a new organization has 0 credits: starting an execution then answers 409 naming the missing credits, on both doors, and changes nothing', async () => {
  const org = await app.organization();
  expect(await creditBalance(org)).toBe(0);
  expect((await org.graphql.ok(CampaignCreditsDocument)).organization.creditBalance).toBe(0);
  const { programId } = await buildCampaign(org, 3);
  const id = await scheduledExecution(org, programId);

  await expectNoCreditConflict(org, id, 'start', 3);
  expect(await readExecution(org, programId, id)).toMatchObject({ status: 'scheduled', contactsPending: 3, actualStartAt: null });
  expect((await org.rest.get('/api/organization/credit-ledger')).body.data).toEqual([]);

  // Another organization sees no such execution, credits or not.
  const other = await app.organization();
  await other.grantCredits(5);
  expect((await other.rest.post(`/api/executions/${id}/start`)).status).toBe(404);
  expect((await other.graphql.run(StartExecutionDocument, { id })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');

  // One credit is enough to start: the runner pauses it when the credits run out.
  await org.grantCredits(1);
  expect((await org.graphql.ok(StartExecutionDocument, { id })).startExecution.status).toBe('running');
});

it('an execution with nobody to call starts with 0 credits and completes without a call', async () => {
  const org = await app.organization();
  const { programId, contacts } = await buildCampaign(org, 1);
  await org.rest.put(`/api/contacts/${contacts[0]!.id}`, { optedOut: true });
  const id = await scheduledExecution(org, programId);
  expect(await readExecution(org, programId, id)).toMatchObject({ totalContacts: 0 });
  expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
  const { runner } = buildRunner(app, { seed: 'semantics-empty' });
  expect(await tickUntil(runner, () => readExecution(org, programId, id), (each) => each.status !== 'running')).toMatchObject({ status: 'completed' });
});

it('paused_no_credits stays paused when credits arrive; a resume without credits is 409 on both doors, with credits it runs to completed', async () => {
  const org = await app.organization();
  const { programId } = await buildCampaign(org, 4, { maxConcurrentCalls: 1 });
  await addCredits(org, 2);
  const id = await scheduledExecution(org, programId);
  expect((await org.rest.post(`/api/executions/${id}/start`)).body.status).toBe('running');
  const read = () => readExecution(org, programId, id);
  const { runner } = buildRunner(app, { seed: 'semantics-credits', weights: ALWAYS_ANSWERED });
  const paused = await tickUntil(runner, read, (each) => each.status === 'paused_no_credits' && each.contactsInProgress === 0);
  expect(paused).toMatchObject({ contactsCompleted: 2, contactsPending: 2 });

  await expectNoCreditConflict(org, id, 'resume', 2);
  expect((await read()).status).toBe('paused_no_credits');

  // Credits arriving do not resume it: a person decides when calling goes on.
  await addCredits(org, 5);
  for (let i = 0; i < 3; i++) {
    await runner.tick();
    await runner.idle();
  }
  expect(await read()).toMatchObject({ status: 'paused_no_credits', contactsCompleted: 2, contactsPending: 2 });
  expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution?.status).toBe('paused_no_credits');

  expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
  expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'completed', contactsCompleted: 4 });
  expect(await creditBalance(org)).toBe(3);
});

it('a user pause and resume does not restart a threshold count, even with resetOnResume; only a resume from paused_threshold does', async () => {
  const org = await app.organization();
  const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
  const { programId } = await buildCampaign(org, 6, { maxConcurrentCalls: 1, autoPauseRules: [rule] });
  await addCredits(org, 10);
  const id = await scheduledExecution(org, programId);
  await org.rest.post(`/api/executions/${id}/start`);
  const read = () => readExecution(org, programId, id);
  const { runner } = buildRunner(app, { seed: 'semantics-reset', weights: ALWAYS_ANSWERED });

  // One tick claims one call (one at a time); once it is recorded, one contact reached "say" and nothing is in flight.
  await runner.tick();
  await runner.idle();
  expect(await read()).toMatchObject({ status: 'running', contactsCompleted: 1, contactsInProgress: 0 });
  expect((await org.graphql.ok(PauseExecutionDocument, { id })).pauseExecution.status).toBe('paused');
  expect((await org.rest.post(`/api/executions/${id}/resume`)).body.status).toBe('running');
  // The count went on from 1: the second contact at "say" pauses it.
  expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'paused_threshold', contactsCompleted: 2 });

  // A resume from paused_threshold restarts the count: two more contacts before the next pause.
  expect((await org.graphql.ok(ResumeExecutionDocument, { id })).resumeExecution.status).toBe('running');
  expect(await tickUntil(runner, read, (each) => each.status !== 'running')).toMatchObject({ status: 'paused_threshold', contactsCompleted: 4 });
});

it('a call that does not connect reaches no node, whatever the dialer reports, so it never trips a rule', async () => {
  const org = await app.organization();
  const rule = { nodeId: 'start', threshold: 1, resetOnResume: false };
  const { programId } = await buildCampaign(org, 3, { maxConcurrentCalls: 1, retryPolicy: { maxAttempts: 1, retryDelayMinutes: 0 }, autoPauseRules: [rule] });
  await addCredits(org, 10);
  const id = await scheduledExecution(org, programId);
  await org.rest.post(`/api/executions/${id}/start`);
  // A carrier that claims its unanswered calls walked the flow.
  const dialer: Dialer = { placeCall: async () => ({ outcome: 'no_answer', reachedNodeIds: ['start', 'say', 'end'], durationSeconds: 0 }) };
  const runner = new CampaignRunner({ em: app.db.database.em, dialer, logger: createLogger('warn'), intervalMs: 5, clock });
  const end = await tickUntil(runner, () => readExecution(org, programId, id), (each) => each.status !== 'running');
  expect(end).toMatchObject({ status: 'completed', contactsFailed: 3, contactsCompleted: 0 });
  expect((await org.graphql.ok(CampaignExecutionDocument, { id })).execution).toMatchObject({ status: 'completed', contactsFailed: 3, creditsSpent: 3 });
});

it('deleting a program keeps the ledger rows of the credits its executions spent, on both doors', async () => {
  const org = await app.organization();
  const rest = await buildCampaign(org, 2);
  const graphql = await buildCampaign(org, 1);
  await addCredits(org, 10);
  const { runner } = buildRunner(app, { seed: 'semantics-ledger', weights: ALWAYS_ANSWERED });
  const spent: Record<string, string> = {};
  for (const { programId } of [rest, graphql]) {
    const id = await scheduledExecution(org, programId);
    await org.rest.post(`/api/executions/${id}/start`);
    await tickUntil(runner, () => readExecution(org, programId, id), (each) => each.status === 'completed');
    spent[programId] = id;
  }
  const before = (await org.rest.get('/api/organization/credit-ledger?limit=100')).body;

  expect((await org.rest.delete(`/api/programs/${rest.programId}`)).status).toBe(204);
  expect((await org.graphql.ok(DeleteProgramDocument, { id: graphql.programId })).deleteProgram.id).toBe(graphql.programId);
  expect((await org.rest.get(`/api/programs/${rest.programId}`)).status).toBe(404);
  expect((await org.rest.get(`/api/executions/${spent[rest.programId]}`)).status).toBe(404);

  const after = await org.rest.get('/api/organization/credit-ledger?limit=100');
  expect(after.body).toEqual(before);
  const spends = (after.body.data as { kind: string; amount: number; executionId: string }[]).filter((entry) => entry.kind === 'spend');
  expect(new Set(spends.map((entry) => entry.executionId))).toEqual(new Set(Object.values(spent)));
  expect(spends.reduce((sum, entry) => sum + entry.amount, 0)).toBe(-3);
  expect((await org.graphql.ok(CreditLedgerDocument, { limit: 100 })).creditLedger).toEqual(after.body);
  expect(await creditBalance(org)).toBe(7);
});
