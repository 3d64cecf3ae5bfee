// Recording in batches (group commit): the statements a dialed contact costs, reports of one call
// applied in order across batches, and claims that follow recorded calls rather than the tick.
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ExecutionEvents } from '../../src/modules/programs/execution-events.js';
import { ExecutionStatus } from '../../src/modules/programs/program.enums.js';
import { ClaimRaced, claimCalls, loadExecution } from '../../src/modules/programs/runner/work-queue.js';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import type { CallRequest, CallResult, Dialer } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { CallStatus } from '../../src/modules/telephony/telephony.enums.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createCampaign, creditBalance, expectConsistent, readExecution, RecordingDialer, runnerErrors, runnerLogs, testRunner, waitFor } from './fixtures.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => {
  expect(runnerErrors()).toEqual([]);
  runnerLogs.length = 0;
});

/** Holds every call until the test lets it end. */
class HeldDialer implements Dialer {
  readonly calls: CallRequest[] = [];
  private readonly waiting: ((result: CallResult) => void)[] = [];

  placeCall(call: CallRequest): Promise<CallResult> {
    this.calls.push(call);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(result: CallResult): void {
    for (const resolve of this.waiting.splice(0)) resolve(result);
  }
}

describe('recording in batches', () => {
  it('a started runner records 200 calls at concurrency 50 in at most 3 statements per dialed contact, claiming as calls end rather than once a tick', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ seed: 'batches', speedMs: 0 }));
    const campaign = await createCampaign(app, { contacts: 200, maxConcurrentCalls: 50 });
    // One tick a minute: only the first tick claims; every later claim follows recorded calls.
    const runner = testRunner(app, { dialer, intervalMs: 60_000 });
    let end!: Awaited<ReturnType<typeof readExecution>>;
    const statements = await recordStatements(app, async () => {
      runner.start();
      end = await waitFor(
        () => readExecution(app, campaign.executionId),
        (row) => row.status === ExecutionStatus.completed,
        (row) => expect(row.contactsInProgress).toBeLessThanOrEqual(50),
      );
      await runner.stop();
    });
    expectConsistent(end);
    expect(end.contactsCompleted + end.contactsFailed).toBe(200);
    expect(dialer.calls).toHaveLength(200);
    expect(new Set(dialer.executionContactIds).size).toBe(200);
    const [calls] = await app.sql<{ n: number; charged: number }>(
      'select count(*)::int as n, coalesce(sum(credits_charged), 0)::int as charged from calls where execution_id = ?',
      [campaign.executionId],
    );
    expect(calls).toEqual({ n: 200, charged: 200 });
    expect(end.creditsSpent).toBe(200);
    // Statements through the ORM's connection (BEGIN and COMMIT are not among them); one call at a time took about 20.
    const perContact = statements.filter((sql) => !/^\s*(begin|commit|rollback|savepoint|release)/i.test(sql)).length / 200;
    expect(perContact).toBeLessThanOrEqual(3);
    // Progress stays coalesced: at most one execution.progress a second (the run takes a few).
    const [progress] = await app.sql<{ n: number }>(
      `select count(*)::int as n from events where type = 'execution.progress' and payload->>'id' = ?`,
      [campaign.executionId],
    );
    expect(progress.n).toBeGreaterThanOrEqual(1);
    expect(progress.n).toBeLessThanOrEqual(10);
    const [completed] = await app.sql<{ n: number }>(
      `select count(*)::int as n from events where type = 'execution.completed' and payload->>'id' = ?`,
      [campaign.executionId],
    );
    expect(completed.n).toBe(1);
  });

  it('two reports of one call sent together are applied in order, each in its own batch: call.started shows the call in progress, call.ended completed', async () => {
    const dialer = new HeldDialer();
    const campaign = await createCampaign(app, { contacts: 1, maxConcurrentCalls: 1 });
    const runner = testRunner(app, { dialer });
    await runner.tick();
    const [call] = await app.sql<{ id: string; status: string }>('select id, status from calls where execution_id = ?', [campaign.executionId]);
    await waitFor(
      () => app.sql<{ status: string }>('select status from calls where id = ?', [call.id]),
      ([row]) => row.status === CallStatus.ringing,
    );
    const at = new Date();
    const results = await Promise.all([
      runner.tracker.apply(call.id, { carrierCallId: '', status: CallStatus.in_progress, answeredBy: 'human', durationSeconds: null, at }),
      runner.tracker.apply(call.id, { carrierCallId: '', status: CallStatus.completed, answeredBy: 'human', durationSeconds: 42, at: new Date(at.getTime() + 42_000) }),
    ]);
    expect(results).toEqual(['applied', 'applied']);
    const events = await app.sql<{ type: string; status: string }>(
      `select type, payload->>'status' as status from events where type in ('call.started', 'call.ended') and payload->>'id' = ? order by created_at`,
      [call.id],
    );
    expect(events).toEqual([
      { type: 'call.started', status: 'in_progress' },
      { type: 'call.ended', status: 'completed' },
    ]);
    const row = await readExecution(app, campaign.executionId);
    expect(row).toMatchObject({ status: ExecutionStatus.completed, contactsCompleted: 1, contactsInProgress: 0 });
    // The simulator's own later reports of the ended call change nothing.
    dialer.release({ outcome: 'answered', reachedNodeIds: ['start'], durationSeconds: 10 });
    await runner.idle();
    expect(await readExecution(app, campaign.executionId)).toMatchObject({ contactsCompleted: 1, nodeCounts: {} });
  });

  // Two connections, so PostgreSQL only (PGlite has one).
  (TEST_DATABASE_URL ? it : it.skip)('a claim whose execution is paused while it runs dials nothing: no call, no credit, every row still pending', async () => {
    const campaign = await createCampaign(app, { contacts: 5, maxConcurrentCalls: 5, credits: 10 });
    const other = new pg.Client({ connectionString: app.db.url });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select id from executions where id = $1 for update', [campaign.executionId]);
      const em = app.db.database.em.fork() as EntityManager;
      const execution = (await loadExecution(em, campaign.executionId))!;
      const claiming = claimCalls(em, execution, { now: new Date(), token: 'race#1', leaseMs: 60_000, events: new ExecutionEvents() }).then(
        (claimed) => claimed,
        (error: unknown) => error,
      );
      // The claim reaches the execution's row and waits for it; the pause commits first.
      await waitFor(
        async () => (await other.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0]!.n,
        (n) => n > 0,
      );
      await other.query(`update executions set status = 'paused' where id = $1`, [campaign.executionId]);
      await other.query('commit');
      const outcome = await claiming;
      expect(outcome instanceof ClaimRaced || (Array.isArray(outcome) && outcome.length === 0)).toBe(true);
    } finally {
      await other.end();
    }
    const [calls] = await app.sql<{ n: number }>('select count(*)::int as n from calls where execution_id = ?', [campaign.executionId]);
    expect(calls.n).toBe(0);
    const row = await readExecution(app, campaign.executionId);
    expect(row).toMatchObject({ status: ExecutionStatus.paused, contactsPending: 5, contactsInProgress: 0, creditsSpent: 0, rows: { pending: 5, in_progress: 0, completed: 0, failed: 0 } });
    const attempts = await app.sql<{ n: number }>('select count(*)::int as n from execution_contacts where execution_id = ? and (attempts <> 0 or claimed_by is not null)', [campaign.executionId]);
    expect(attempts[0].n).toBe(0);
    expect(await creditBalance(app, campaign.org.organizationId)).toBe(10);
  });
});
