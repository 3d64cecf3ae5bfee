import { openDatabase } from '../../src/db/orm.js';
import { ExecutionStatus } from '../../src/modules/programs/program.enums.js';
import { countsAfterResume } from '../../src/modules/programs/runner/auto-pause.js';
import type { CallRequest, CallResult, Dialer } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedSwitch } from '../../src/modules/programs/runner/simulated-carrier.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
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

const ALWAYS_ANSWERED = { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 };

/** Ticks until the runner has nothing left to do for this execution. */
async function runUntil(runner: ReturnType<typeof testRunner>, executionId: string, status: ExecutionStatus) {
  const row = await waitFor(
    async () => {
      await runner.tick();
      await runner.idle();
      return readExecution(app, executionId);
    },
    (row) => row.status === status && row.contactsInProgress === 0,
    expectConsistent,
  );
  return row;
}

async function resume(executionId: string): Promise<void> {
  const [row] = await app.sql<{ auto_pause_rules: never[]; node_counts: Record<string, number> }>(
    'select auto_pause_rules, node_counts from executions where id = ?',
    [executionId],
  );
  await app.sql(`update executions set status = 'running', node_counts = ?::jsonb where id = ?`, [
    JSON.stringify(countsAfterResume(row.auto_pause_rules, row.node_counts)),
    executionId,
  ]);
}

describe('credits', () => {
  it('three credits for ten contacts: three calls, then paused_no_credits; more credits and a resume finish the job', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 5 }));
    const campaign = await createCampaign(app, { contacts: 10, credits: 3, maxConcurrentCalls: 2 });
    const runner = testRunner(app, { dialer });

    const paused = await runUntil(runner, campaign.executionId, ExecutionStatus.paused_no_credits);
    expect(dialer.calls).toHaveLength(3);
    expect(paused).toMatchObject({ creditsSpent: 3, contactsPending: 7 });
    expect(paused.contactsCompleted + paused.contactsFailed).toBe(3);
    expect(await creditBalance(app, campaign.org.organizationId)).toBe(0);
    for (let i = 0; i < 3; i++) await runner.tick();
    expect(dialer.calls).toHaveLength(3);

    await app.sql('update organizations set credit_balance = 20 where id = ?', [campaign.org.organizationId]);
    await resume(campaign.executionId);
    const done = await runUntil(runner, campaign.executionId, ExecutionStatus.completed);
    expect(dialer.calls).toHaveLength(10);
    expect(new Set(dialer.executionContactIds).size).toBe(10);
    expect(done.creditsSpent).toBe(10);
    expect(await creditBalance(app, campaign.org.organizationId)).toBe(13);
  });
});

describe('auto-pause thresholds', () => {
  it('pauses after two contacts reach the node; a resume with resetOnResume counts two more', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0, weights: ALWAYS_ANSWERED }));
    const campaign = await createCampaign(app, {
      contacts: 8,
      maxConcurrentCalls: 1,
      autoPauseRules: [{ nodeId: 'greet', threshold: 2, resetOnResume: true }],
    });
    const runner = testRunner(app, { dialer });

    let row = await runUntil(runner, campaign.executionId, ExecutionStatus.paused_threshold);
    expect(row).toMatchObject({ contactsCompleted: 2, contactsPending: 6 });
    expect(row.nodeCounts).toMatchObject({ greet: 2, start: 2 });
    for (let i = 0; i < 3; i++) await runner.tick();
    expect(dialer.calls).toHaveLength(2);

    await resume(campaign.executionId);
    row = await runUntil(runner, campaign.executionId, ExecutionStatus.paused_threshold);
    expect(row).toMatchObject({ contactsCompleted: 4, contactsPending: 4 });
    expect(row.nodeCounts.greet).toBe(2);
    expect(row.nodeCounts.start).toBe(4);
  });

  it('without resetOnResume the count goes on: the next contact at the node pauses again', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0, weights: ALWAYS_ANSWERED }));
    const campaign = await createCampaign(app, {
      contacts: 8,
      maxConcurrentCalls: 1,
      autoPauseRules: [{ nodeId: 'greet', threshold: 2, resetOnResume: false }],
    });
    const runner = testRunner(app, { dialer });
    await runUntil(runner, campaign.executionId, ExecutionStatus.paused_threshold);
    await resume(campaign.executionId);
    const row = await runUntil(runner, campaign.executionId, ExecutionStatus.paused_threshold);
    expect(row).toMatchObject({ contactsCompleted: 3, contactsPending: 5 });
    expect(row.nodeCounts.greet).toBe(3);
  });

  it('counts contacts, not calls: a retried contact counts a node once, however many of its calls reach it', async () => {
    // A carrier that reports the start node on unanswered attempts too; the third attempt answers.
    const dialer: Dialer = {
      placeCall: async (call: CallRequest): Promise<CallResult> =>
        call.attempt < 3
          ? { outcome: 'no_answer', reachedNodeIds: ['start'], durationSeconds: 0 }
          : { outcome: 'answered', reachedNodeIds: ['start', 'greet'], durationSeconds: 30 },
    };
    const campaign = await createCampaign(app, {
      contacts: 1,
      retryPolicy: { maxAttempts: 3, retryDelayMinutes: 0 },
      autoPauseRules: [{ nodeId: 'start', threshold: 2, resetOnResume: false }],
    });
    const row = await runUntil(testRunner(app, { dialer }), campaign.executionId, ExecutionStatus.completed);
    expect(row).toMatchObject({ contactsCompleted: 1, nodeCounts: { start: 1, greet: 1 } });
    const [contact] = await app.sql<{ attempts: number; reached_node_ids: string[] }>(
      'select attempts, reached_node_ids from execution_contacts where execution_id = ?',
      [campaign.executionId],
    );
    expect(contact).toEqual({ attempts: 3, reached_node_ids: ['start', 'greet'] });
  });

  it('a rule on a node no call reaches never pauses', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0, weights: ALWAYS_ANSWERED }));
    const campaign = await createCampaign(app, {
      contacts: 5,
      autoPauseRules: [{ nodeId: 'vm', threshold: 1, resetOnResume: false }],
    });
    const row = await runUntil(testRunner(app, { dialer }), campaign.executionId, ExecutionStatus.completed);
    expect(row.contactsCompleted).toBe(5);
    expect(row.nodeCounts.vm).toBeUndefined();
  });
});

describe('two runners on one database', () => {
  it('never dial the same contact twice', async () => {
    const carrier = new SimulatedDialer({ seed: 'replicas', speedMs: 3 });
    const dialerOne = new RecordingDialer(carrier);
    const dialerTwo = new RecordingDialer(carrier);
    const campaign = await createCampaign(app, { contacts: 60, maxConcurrentCalls: 6 });
    // On PostgreSQL the second runner has its own ORM and connection pool, as a second replica would.
    const replica = app.db.url ? await openDatabase({ databaseUrl: app.db.url, dataDir: 'memory://', migrate: false }) : null;
    const one = testRunner(app, { dialer: dialerOne, intervalMs: 2 });
    const two = testRunner(app, { dialer: dialerTwo, intervalMs: 2, ...(replica ? { em: replica.em } : {}) });
    one.start();
    two.start();
    const end = await waitFor(
      () => readExecution(app, campaign.executionId),
      (row) => row.status === ExecutionStatus.completed,
      (row) => {
        expectConsistent(row);
        expect(row.contactsInProgress).toBeLessThanOrEqual(6);
      },
    );
    await Promise.all([one.stop(), two.stop()]);
    await replica?.close();
    // Both took part, and between them every contact was dialed exactly once.
    expect(dialerOne.calls.length).toBeGreaterThan(0);
    expect(dialerTwo.calls.length).toBeGreaterThan(0);
    const dialed = [...dialerOne.executionContactIds, ...dialerTwo.executionContactIds];
    expect(dialed).toHaveLength(60);
    expect(new Set(dialed).size).toBe(60);
    expect(end.contactsCompleted + end.contactsFailed).toBe(60);
    const notOnce = await app.sql<{ n: number }>('select count(*)::int as n from execution_contacts where execution_id = ? and attempts <> 1', [campaign.executionId]);
    expect(notOnce[0].n).toBe(0);
  });
});

/** A carrier whose calls hang until the test lets them end. */
class HangingDialer implements Dialer {
  readonly calls: CallRequest[] = [];
  private readonly pending: ((result: CallResult) => void)[] = [];
  placeCall(call: CallRequest): Promise<CallResult> {
    this.calls.push(call);
    return new Promise((resolve) => this.pending.push(resolve));
  }
  finishAll(result: CallResult): void {
    for (const resolve of this.pending.splice(0)) resolve(result);
  }
}

/** Waits until the simulated carrier's ringing reports of `count` calls have landed (they renew the leases on the runner's clock). */
async function ringing(executionId: string, count: number): Promise<void> {
  const sql = `select count(*) as n from calls where execution_id = ? and status = 'ringing'`;
  await waitFor(async () => Number((await app.sql<{ n: number }>(sql, [executionId]))[0].n), (n) => n === count);
}

describe('a runner killed mid-call', () => {
  it('once its lease expires the carrier is asked first: a call still live keeps its claim, and its end is recorded once', async () => {
    // Pinned clocks: the lease runs out because the survivor's clock says so, not because the test slept.
    let now = new Date('2026-07-01T10:00:00Z');
    const clock = () => now;
    const campaign = await createCampaign(app, { contacts: 2, maxConcurrentCalls: 2 });
    const hanging = new HangingDialer();
    const dead = testRunner(app, { dialer: hanging, leaseMs: 60_000, clock });
    await dead.tick();
    expect(hanging.calls).toHaveLength(2);
    await ringing(campaign.executionId, 2);
    await dead.stop(0); // the runner is gone: no more ticks, no lease renewals; its calls live on at the carrier
    expectConsistent(await readExecution(app, campaign.executionId));

    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0, weights: ALWAYS_ANSWERED }));
    const survivor = testRunner(app, { dialer, leaseMs: 60_000, clock });
    now = new Date(now.getTime() + 61_000);
    await survivor.tick();
    await survivor.idle();
    // The carrier (the simulator both runners share, as replicas share Twilio) says the calls ring: nobody re-dials.
    expect(dialer.calls).toHaveLength(0);
    const leases = await app.sql<{ lease_until: Date; status: string }>('select lease_until, status from execution_contacts where execution_id = ?', [campaign.executionId]);
    expect(leases.every((row) => row.status === 'in_progress' && new Date(row.lease_until) > now)).toBe(true);

    hanging.finishAll({ outcome: 'answered', reachedNodeIds: ['start', 'greet'], durationSeconds: 40 });
    await dead.idle();
    const row = await readExecution(app, campaign.executionId);
    expectConsistent(row);
    expect(row).toMatchObject({ status: ExecutionStatus.completed, contactsCompleted: 2, contactsFailed: 0, creditsSpent: 2 });
    expect(row.nodeCounts).toEqual({ start: 2, greet: 2 });
    const calls = await app.sql<{ status: string; outcome: string; attempt: number }>('select status, outcome, attempt from calls where execution_id = ?', [campaign.executionId]);
    expect(calls).toEqual([
      { status: 'completed', outcome: 'answered', attempt: 1 },
      { status: 'completed', outcome: 'answered', attempt: 1 },
    ]);
  });

  it('a call the carrier has no record of fails with its credit back, the contact is dialed again without an attempt counted, and a late report changes nothing', async () => {
    let now = new Date('2026-07-02T10:00:00Z');
    const clock = () => now;
    const campaign = await createCampaign(app, { contacts: 2, maxConcurrentCalls: 2, credits: 10 });
    const hanging = new HangingDialer();
    // Each runner has its own simulated switch: the dead one's calls died with its process.
    const dead = testRunner(app, { dialer: hanging, leaseMs: 60_000, clock, simulatedSwitch: new SimulatedSwitch() });
    await dead.tick();
    await ringing(campaign.executionId, 2);
    await dead.stop(0);

    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0, weights: ALWAYS_ANSWERED }));
    const survivor = testRunner(app, { dialer, leaseMs: 60_000, clock, simulatedSwitch: new SimulatedSwitch() });
    now = new Date(now.getTime() + 59_000);
    await survivor.tick(); // leases still held: nothing is asked or taken
    expect(dialer.calls).toHaveLength(0);
    now = new Date(now.getTime() + 2_000);
    await survivor.tick();
    await survivor.idle();
    expect(dialer.calls.map((call) => call.executionContactId).sort()).toEqual(hanging.calls.map((call) => call.executionContactId).sort());
    expect(dialer.calls.every((call) => call.attempt === 1)).toBe(true);

    hanging.finishAll({ outcome: 'no_answer', reachedNodeIds: ['start'], durationSeconds: 0 });
    await dead.idle();
    const row = await readExecution(app, campaign.executionId);
    expectConsistent(row);
    expect(row).toMatchObject({ status: ExecutionStatus.completed, contactsCompleted: 2, contactsFailed: 0, creditsSpent: 2 });
    expect(row.nodeCounts).toEqual({ start: 2, greet: 2, offer: 2, end: 2 });
    expect(await creditBalance(app, campaign.org.organizationId)).toBe(8);
    const calls = await app.sql<{ status: string; outcome: string; error_text: string | null; credits_charged: number }>(
      'select status, outcome, error_text, credits_charged from calls where execution_id = ? order by queued_at, status',
      [campaign.executionId],
    );
    expect(calls).toEqual([
      { status: 'failed', outcome: 'failed', error_text: 'The carrier has no record of this call', credits_charged: 0 },
      { status: 'failed', outcome: 'failed', error_text: 'The carrier has no record of this call', credits_charged: 0 },
      { status: 'completed', outcome: 'answered', error_text: null, credits_charged: 1 },
      { status: 'completed', outcome: 'answered', error_text: null, credits_charged: 1 },
    ]);
    const rows = await app.sql<{ attempts: number; last_outcome: string }>('select attempts, last_outcome from execution_contacts where execution_id = ?', [campaign.executionId]);
    expect(rows).toEqual([
      { attempts: 1, last_outcome: 'answered' },
      { attempts: 1, last_outcome: 'answered' },
    ]);
  });

  it('without an injected clock, leases are written on the database clock', async () => {
    const campaign = await createCampaign(app, { contacts: 1 });
    const hanging = new HangingDialer();
    const runner = testRunner(app, { dialer: hanging, leaseMs: 3_600_000 });
    await runner.tick();
    const [lease] = await app.sql<{ ahead: number }>(
      `select extract(epoch from (lease_until - now())) as ahead from execution_contacts where execution_id = ?`,
      [campaign.executionId],
    );
    expect(Math.abs(Number(lease.ahead) - 3600)).toBeLessThan(60);
    hanging.finishAll({ outcome: 'answered', reachedNodeIds: [], durationSeconds: 1 });
    await runner.stop();
    expectConsistent(await readExecution(app, campaign.executionId));
  });
});

describe('a pause while calls are in flight', () => {
  it('records the calls that were under way and claims nothing new', async () => {
    const campaign = await createCampaign(app, { contacts: 5, maxConcurrentCalls: 2 });
    const hanging = new HangingDialer();
    const runner = testRunner(app, { dialer: hanging });
    await runner.tick();
    expect(hanging.calls).toHaveLength(2);
    await app.sql(`update executions set status = 'paused' where id = ?`, [campaign.executionId]);
    hanging.finishAll({ outcome: 'answered', reachedNodeIds: ['start', 'greet'], durationSeconds: 30 });
    await runner.idle();
    await runner.tick();
    await runner.idle();
    expect(hanging.calls).toHaveLength(2);
    const row = await readExecution(app, campaign.executionId);
    expectConsistent(row);
    expect(row).toMatchObject({ status: ExecutionStatus.paused, contactsCompleted: 2, contactsPending: 3, contactsInProgress: 0 });
    expect(row.nodeCounts).toEqual({ start: 2, greet: 2 });
  });
});
