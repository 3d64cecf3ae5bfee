import { CancelExecutionDocument, PauseExecutionDocument, ResumeExecutionDocument, StopExecutionDocument } from '../generated/graphql.js';
import { createLogger } from '../../src/common/logger.js';
import { CampaignRunner } from '../../src/modules/programs/runner/campaign-runner.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { ALWAYS_ANSWERED, addCredits, buildCampaign, clock, readExecution, tickUntil } from './fixtures.js';

// Every execution state change is one info line with the execution, program, organization, from, to and reason.

interface Line {
  level: number;
  msg: string;
  component?: string;
  executionId?: string;
  programId?: string;
  organizationId?: string;
  from?: string | null;
  to?: string;
  reason?: string;
}

const lines: Line[] = [];
const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };
/** The transitions logged for one execution, in order, as [from, to, reason]. */
const movesOf = (executionId: string) =>
  lines.filter((line) => line.component === 'executions' && line.executionId === executionId).map((line) => [line.from, line.to, line.reason]);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ logLevel: 'info' }, sink);
});
afterAll(() => app.close());
afterEach(() => {
  expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  lines.length = 0;
});

/** A runner as main.ts builds it, logging at info into the same destination. */
function runner(seed: string, now: () => Date = clock) {
  const dialer = new SimulatedDialer({ speedMs: 0, seed, weights: ALWAYS_ANSWERED });
  return new CampaignRunner({ em: app.db.database.em, dialer, logger: createLogger('info', sink), intervalMs: 5, clock: now });
}

async function created(org: TestOrganization, programId: string, body?: Record<string, unknown>): Promise<string> {
  const res = await org.rest.post(`/api/programs/${programId}/executions`, body);
  expect(res.status).toBe(201);
  return res.body.id;
}

it('user moves on both doors: created, started, paused, resumed, stopped and cancelled, one info line each', async () => {
  const org = await app.organization();
  const { programId } = await buildCampaign(org, 2);
  await addCredits(org, 5);
  const id = await created(org, programId);
  expect((await org.rest.post(`/api/executions/${id}/start`)).status).toBe(200);
  await org.graphql.ok(PauseExecutionDocument, { id });
  await org.rest.post(`/api/executions/${id}/resume`);
  await org.graphql.ok(StopExecutionDocument, { id });
  const other = await created(org, programId);
  await org.graphql.ok(CancelExecutionDocument, { id: other });
  // A refused move (409) logs nothing.
  expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(409);

  expect(movesOf(id)).toEqual([
    [null, 'scheduled', 'user'],
    ['scheduled', 'running', 'user'],
    ['running', 'paused', 'user'],
    ['paused', 'running', 'user'],
    ['running', 'stopped', 'user'],
  ]);
  expect(movesOf(other)).toEqual([
    [null, 'scheduled', 'user'],
    ['scheduled', 'cancelled', 'user'],
  ]);
  const logged = lines.filter((line) => line.component === 'executions' && line.executionId === id);
  expect(logged.map((line) => line.msg)).toEqual([
    'execution created: new → scheduled (user)',
    'execution started: scheduled → running (user)',
    'execution paused: running → paused (user)',
    'execution resumed: paused → running (user)',
    'execution stopped: running → stopped (user)',
  ]);
  expect(logged.every((line) => line.level === 30 && line.programId === programId && line.organizationId === org.organizationId)).toBe(true);
});

it('runner moves: paused for credits and at a threshold, resumed, completed; each with its reason', async () => {
  const org = await app.organization();
  const rule = { nodeId: 'say', threshold: 2, resetOnResume: true };
  const { programId } = await buildCampaign(org, 3, { maxConcurrentCalls: 2, autoPauseRules: [rule] });
  await addCredits(org, 1);
  const id = await created(org, programId);
  await org.rest.post(`/api/executions/${id}/start`);
  const read = () => readExecution(org, programId, id);
  const work = runner('transition-logs');

  // Two slots, one credit: one call, then paused_no_credits; that call still counts at "say".
  await tickUntil(work, read, (each) => each.status === 'paused_no_credits' && each.contactsInProgress === 0);
  await addCredits(org, 5);
  expect((await org.rest.post(`/api/executions/${id}/resume`)).status).toBe(200);
  // The next contact at "say" makes two: paused_threshold.
  await tickUntil(work, read, (each) => each.status === 'paused_threshold' && each.contactsInProgress === 0);
  await org.graphql.ok(ResumeExecutionDocument, { id });
  await tickUntil(work, read, (each) => each.status === 'completed');

  expect(movesOf(id)).toEqual([
    [null, 'scheduled', 'user'],
    ['scheduled', 'running', 'user'],
    ['running', 'paused_no_credits', 'no_credits'],
    ['paused_no_credits', 'running', 'user'],
    ['running', 'paused_threshold', 'threshold'],
    ['paused_threshold', 'running', 'user'],
    ['running', 'completed', 'no_contacts_left'],
  ]);
  const runnerLines = lines.filter((line) => line.component === 'executions' && line.reason !== 'user');
  expect(runnerLines.map((line) => line.msg)).toEqual([
    'execution paused: running → paused_no_credits (no_credits)',
    'execution paused: running → paused_threshold (threshold)',
    'execution completed: running → completed (no_contacts_left)',
  ]);
  expect(runnerLines.every((line) => line.level === 30 && line.programId === programId && line.organizationId === org.organizationId)).toBe(true);
});

it('schedule moves: started at scheduledStartAt and stopped at scheduledStopAt, with reason schedule', async () => {
  const org = await app.organization();
  // Ten past an hour, well ahead: no contact's clock is at 23:59, the minute the all-day window leaves out.
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 7_800_000);
  const stop = new Date(start.getTime() + 3_600_000);
  const { programId } = await buildCampaign(org, 2, { scheduledStartAt: start.toISOString(), scheduledStopAt: stop.toISOString() });
  const id = await created(org, programId);
  let now = new Date(start.getTime() + 1000);
  const work = runner('transition-schedule', () => now);
  await work.tick();
  await work.idle();
  // No credits: the first claim pauses it, which is logged too.
  now = new Date(stop.getTime() + 1000);
  await work.tick();
  expect(movesOf(id)).toEqual([
    [null, 'scheduled', 'user'],
    ['scheduled', 'running', 'schedule'],
    ['running', 'paused_no_credits', 'no_credits'],
    ['paused_no_credits', 'stopped', 'schedule'],
  ]);
});
