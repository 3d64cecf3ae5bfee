import { ExecutionStatus } from '../../src/modules/programs/program.enums.js';
import { type CallRequest, type CallResult, type Dialer, isFinalOutcome } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  createCampaign,
  creditBalance,
  type ExecutionRow,
  expectConsistent,
  expectedCalls,
  readExecution,
  RecordingDialer,
  runnerErrors,
  runnerLogs,
  testRunner,
  ticks,
  tickUntilRow,
  waitFor,
} from './fixtures.js';
import { openDatabase } from '../../src/db/orm.js';
import { countsAfterResume } from '../../src/modules/programs/runner/auto-pause.js';
import { SimulatedSwitch } from '../../src/modules/programs/runner/simulated-carrier.js';
import { CLAIM_TURN_TICKS } from '../../src/modules/programs/runner/campaign-runner.js';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ExecutionEvents } from '../../src/modules/programs/execution-events.js';
import { claimCalls, ClaimRaced, loadExecution } from '../../src/modules/programs/runner/work-queue.js';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { CallStatus } from '../../src/modules/telephony/telephony.enums.js';
import { recordStatements } from '../helpers/users.js';

// The campaign runner: campaigns, pauses and replicas, batching, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('campaign', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());
  afterEach(() => {
    expect(runnerErrors()).toEqual([]);
    runnerLogs.length = 0;
  });

  async function contactRows(executionId: string) {
    return app.sql<{ phone: string; status: string; attempts: number; last_outcome: string; reached_node_ids: string[]; claimed_by: string | null }>(
      'select phone, status, attempts, last_outcome, reached_node_ids, claimed_by from execution_contacts where execution_id = ?',
      [executionId],
    );
  }

  it('runs a campaign to completed; the counters add up at every observed moment', async () => {
    const seeded = new SimulatedDialer({ seed: 'campaign', speedMs: 15 });
    const dialer = new RecordingDialer(seeded);
    const campaign = await createCampaign(app, { contacts: 40, maxConcurrentCalls: 4, retryPolicy: { maxAttempts: 2, retryDelayMinutes: 0 } });
    const runner = testRunner(app, { dialer });
    const samples: ExecutionRow[] = [];
    runner.start();
    const end = await waitFor(
      () => readExecution(app, campaign.executionId),
      (row) => row.status !== ExecutionStatus.running,
      (row) => {
        expectConsistent(row);
        expect(row.contactsInProgress).toBeLessThanOrEqual(4);
        samples.push(row);
      },
    );
    await runner.stop();

    expect(end.status).toBe(ExecutionStatus.completed);
    expect(end.actualEndAt).not.toBeNull();
    expect(end.contactsCompleted + end.contactsFailed).toBe(40);
    expect(end.contactsPending + end.contactsInProgress).toBe(0);
    // The runner was watched mid-flight, not only at the end.
    expect(samples.some((row) => row.contactsInProgress > 0)).toBe(true);

    const expected = new Map(campaign.phones.map((phone) => [phone, expectedCalls(seeded, phone, 2)]));
    const completed = [...expected.values()].filter((calls) => isFinalOutcome(calls.at(-1)!)).length;
    expect(end.contactsCompleted).toBe(completed);
    expect(dialer.calls).toHaveLength([...expected.values()].reduce((sum, calls) => sum + calls.length, 0));
    expect(end.creditsSpent).toBe(dialer.calls.length);
    expect(await creditBalance(app, campaign.org.organizationId)).toBe(1_000_000 - dialer.calls.length);

    let answered = 0;
    for (const row of await contactRows(campaign.executionId)) {
      const calls = expected.get(row.phone)!;
      expect(row.attempts).toBe(calls.length);
      expect(row.last_outcome).toBe(calls.at(-1));
      expect(row.status).toBe(isFinalOutcome(calls.at(-1)!) ? 'completed' : 'failed');
      expect(row.claimed_by).toBeNull();
      if (row.last_outcome === 'answered') {
        answered++;
        expect(row.reached_node_ids).toEqual(['start', 'greet', 'offer', 'end']);
      }
    }
    // Nodes count contacts: each contact that connected once passed the start node; only answered ones greeted.
    expect(end.nodeCounts.start).toBe(end.contactsCompleted);
    expect(end.nodeCounts.greet).toBe(answered);
    // Each call carried the flow and its attempt number.
    expect(dialer.calls.every((call) => call.flow?.nodes.length === 5)).toBe(true);
    expect(dialer.calls.filter((call) => call.attempt === 2).length).toBe(dialer.calls.length - 40);
  });

  it('retries per policy: at most maxAttempts calls, each after retryDelayMinutes', async () => {
    let now = new Date('2026-06-01T12:00:00Z');
    const seeded = new SimulatedDialer({ seed: 'retries', speedMs: 0, weights: { answered: 1, no_answer: 2, busy: 0, voicemail: 0, failed: 0 } });
    const dialer = new RecordingDialer(seeded);
    const campaign = await createCampaign(app, { contacts: 12, maxConcurrentCalls: 12, retryPolicy: { maxAttempts: 3, retryDelayMinutes: 30 } });
    const runner = testRunner(app, { dialer, clock: () => now });
    const round = async () => {
      await runner.tick();
      await runner.idle();
      expectConsistent(await readExecution(app, campaign.executionId));
    };

    await round();
    expect(dialer.calls).toHaveLength(12);
    const retried = campaign.phones.filter((phone) => seeded.outcomeOf(phone, 1) === 'no_answer');
    expect(retried.length).toBeGreaterThan(0);
    await round(); // same minute: nobody is due again yet
    expect(dialer.calls).toHaveLength(12);
    now = new Date(now.getTime() + 29 * 60_000);
    await round();
    expect(dialer.calls).toHaveLength(12);
    now = new Date(now.getTime() + 60_000);
    await round();
    expect(
      dialer.calls
        .slice(12)
        .map((call) => call.phone)
        .sort(),
    ).toEqual([...retried].sort());
    now = new Date(now.getTime() + 30 * 60_000);
    await round();
    now = new Date(now.getTime() + 30 * 60_000);
    await round(); // a fourth attempt is never made

    const expected = new Map(campaign.phones.map((phone) => [phone, expectedCalls(seeded, phone, 3)]));
    expect(dialer.calls).toHaveLength([...expected.values()].reduce((sum, calls) => sum + calls.length, 0));
    for (const row of await contactRows(campaign.executionId)) {
      expect(row.attempts).toBe(expected.get(row.phone)!.length);
      expect(row.attempts).toBeLessThanOrEqual(3);
    }
    const end = await readExecution(app, campaign.executionId);
    expect(end.status).toBe(ExecutionStatus.completed);
    expect(end.contactsFailed).toBe([...expected.values()].filter((calls) => calls.length === 3 && calls[2] === 'no_answer').length);
  });

  it('calls only contacts whose own clock is inside the calling window', async () => {
    const now = new Date('2026-03-10T01:00:00Z'); // Tuesday 10:00 in Tokyo, Monday 18:00 in Los Angeles, 01:00 UTC
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
    const campaign = await createCampaign(app, {
      contacts: 9,
      timeZones: ['Asia/Tokyo', 'America/Los_Angeles', null],
      callingWindow: { startTime: '09:00', endTime: '12:00', daysOfWeek: [1, 2, 3, 4, 5] },
    });
    const runner = testRunner(app, { dialer, clock: () => now });
    await runner.tick();
    await runner.idle();
    expect(dialer.calls.map((call) => call.timeZone)).toEqual(['Asia/Tokyo', 'Asia/Tokyo', 'Asia/Tokyo']);
    const row = await readExecution(app, campaign.executionId);
    expectConsistent(row);
    expect(row.status).toBe(ExecutionStatus.running);
    expect(row.contactsPending).toBe(6);
    await app.sql(`update executions set status = 'stopped' where id = ?`, [campaign.executionId]);
  });

  it('a window that no local time matches dials nobody', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
    const campaign = await createCampaign(app, {
      contacts: 6,
      timeZones: ['Europe/Paris', 'America/New_York', null],
      callingWindow: { startTime: '00:00', endTime: '00:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] },
    });
    const runner = testRunner(app, { dialer });
    for (let i = 0; i < 3; i++) await runner.tick();
    await runner.idle();
    expect(dialer.calls).toEqual([]);
    const row = await readExecution(app, campaign.executionId);
    expect(row).toMatchObject({ status: ExecutionStatus.running, contactsPending: 6, creditsSpent: 0 });
    await app.sql(`update executions set status = 'stopped' where id = ?`, [campaign.executionId]);
  });

  it('never calls a contact who opted out after the start: the row fails with no call and no credit', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
    const campaign = await createCampaign(app, { contacts: 6 });
    const optedOut = campaign.phones.slice(0, 2);
    await app.sql(`update contacts set opted_out = true where phone in (?, ?)`, optedOut);
    const runner = testRunner(app, { dialer });
    const end = await tickUntilRow(app, runner, campaign.executionId, (row) => row.status === ExecutionStatus.completed);
    expect(dialer.calls.map((call) => call.phone).sort()).toEqual(campaign.phones.slice(2).sort());
    expect(end.creditsSpent).toBe(4);
    const rows = await app.sql<{ status: string; attempts: number }>(
      `select status, attempts from execution_contacts where execution_id = ? and last_outcome = 'opted_out'`,
      [campaign.executionId],
    );
    expect(rows).toEqual([
      { status: 'failed', attempts: 0 },
      { status: 'failed', attempts: 0 },
    ]);
  });

  it('never calls a contact deleted after the start: the row fails as contact_deleted with no call and no credit', async () => {
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
    const campaign = await createCampaign(app, { contacts: 5 });
    const [deleted, optedOut] = campaign.phones;
    await app.sql('delete from contacts where phone = ?', [deleted]);
    await app.sql('update contacts set opted_out = true where phone = ?', [optedOut]);
    const runner = testRunner(app, { dialer });
    const end = await tickUntilRow(app, runner, campaign.executionId, (row) => row.status === ExecutionStatus.completed);
    expect(dialer.calls.map((call) => call.phone).sort()).toEqual(campaign.phones.slice(2).sort());
    expect(end).toMatchObject({ creditsSpent: 3, totalContacts: 5 });
    const rows = await app.sql<{ phone: string; status: string; attempts: number; last_outcome: string }>(
      `select phone, status, attempts, last_outcome from execution_contacts where execution_id = ? and phone in (?, ?) order by last_outcome`,
      [campaign.executionId, deleted, optedOut],
    );
    expect(rows).toEqual([
      { phone: deleted, status: 'failed', attempts: 0, last_outcome: 'contact_deleted' },
      { phone: optedOut, status: 'failed', attempts: 0, last_outcome: 'opted_out' },
    ]);
  });

  it('starts scheduled executions at their start time and stops them at their stop time', async () => {
    let now = new Date('2026-06-01T08:00:00Z');
    const dialer = new RecordingDialer(new SimulatedDialer({ speedMs: 0 }));
    const campaign = await createCampaign(app, {
      contacts: 4,
      maxConcurrentCalls: 2,
      status: ExecutionStatus.scheduled,
      scheduledStartAt: new Date('2026-06-01T09:00:00Z'),
      scheduledStopAt: new Date('2026-06-01T10:00:00Z'),
    });
    const runner = testRunner(app, { dialer, clock: () => now });
    await runner.tick();
    expect((await readExecution(app, campaign.executionId)).status).toBe(ExecutionStatus.scheduled);
    expect(dialer.calls).toHaveLength(0);

    now = new Date('2026-06-01T09:00:00Z');
    await runner.tick();
    await runner.idle();
    const [started] = await app.sql<{ status: string; actual_start_at: Date }>('select status, actual_start_at from executions where id = ?', [
      campaign.executionId,
    ]);
    expect(started.status).toBe('running');
    expect(new Date(started.actual_start_at).toISOString()).toBe(now.toISOString());
    expect(dialer.calls).toHaveLength(2);

    now = new Date('2026-06-01T10:00:00Z');
    await runner.tick();
    await runner.idle();
    const stopped = await readExecution(app, campaign.executionId);
    expectConsistent(stopped);
    expect(stopped.status).toBe(ExecutionStatus.stopped);
    expect(new Date(stopped.actualEndAt!).toISOString()).toBe(now.toISOString());
    expect(stopped.contactsPending).toBe(2);
    expect(dialer.calls).toHaveLength(2);
  });

  it('runs the onTick hooks each tick; a failing hook is logged and the others still run', async () => {
    const seen: Date[] = [];
    const now = new Date('2026-06-02T00:00:00Z');
    const runner = testRunner(app, { dialer: new SimulatedDialer({ speedMs: 0 }), clock: () => now });
    runner.onTick.push(async () => {
      throw new Error('hook failed');
    });
    runner.onTick.push(async (at) => {
      seen.push(at);
    });
    await runner.tick();
    await runner.tick();
    expect(seen).toEqual([now, now]);
    expect(runnerErrors()).toEqual(['campaign runner: tick hook failed', 'campaign runner: tick hook failed']);
    runnerLogs.length = 0;
  });
});

describe('pauses-and-replicas', () => {
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
    const row = await tickUntilRow(app, runner, executionId, (row) => row.status === status && row.contactsInProgress === 0);
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
    /**
     * Starts the runners and resumes the paused execution once each has seen the others' heartbeats:
     * runners started at the same instant otherwise learn of each other only at their second tick,
     * and until then the first one claims alone.
     */
    async function startTogether(runners: ReturnType<typeof testRunner>[], executionId: string): Promise<void> {
      for (const runner of runners) runner.start();
      const ids = runners.map((runner) => runner.id);
      await waitFor(
        () => app.sql<{ n: number }>(`select count(*)::int as n from runner_heartbeats where id in (${ids.map(() => '?').join(', ')})`, ids),
        ([row]) => row!.n === runners.length,
      );
      await Promise.all(runners.map((runner) => runner.tick()));
      await app.sql(`update executions set status = 'running', actual_start_at = now() where id = ?`, [executionId]);
    }

    it('never dial the same contact twice, and take turns at the execution: each turn’s calls are placed by one runner, the next turn’s by the other', async () => {
      // One carrier for both runners that holds each call until the test ends it, and one clock the test
      // moves a turn on (CLAIM_TURN_TICKS ticks) before ending the calls: whose turn it is never depends on
      // how fast the machine runs, so both runners take part on a loaded one too.
      const carrier = new HeldCarrier();
      const dialerOne = new RecordingDialer(carrier);
      const dialerTwo = new RecordingDialer(carrier);
      const campaign = await createCampaign(app, { contacts: 60, maxConcurrentCalls: 6, status: ExecutionStatus.paused });
      let now = new Date();
      const clock = () => now;
      const intervalMs = 5;
      // On PostgreSQL the second runner has its own ORM and connection pool, as a second replica would.
      const replica = app.db.url ? await openDatabase({ databaseUrl: app.db.url, dataDir: 'memory://', migrate: false }) : null;
      const one = testRunner(app, { dialer: dialerOne, intervalMs, clock });
      const two = testRunner(app, { dialer: dialerTwo, intervalMs, clock, ...(replica ? { em: replica.em } : {}) });
      const turns: string[] = [];
      try {
        await startTogether([one, two], campaign.executionId);
        for (let placed = 6; placed <= 60; placed += 6) {
          const before = { one: dialerOne.calls.length, two: dialerTwo.calls.length };
          await waitFor(
            () => readExecution(app, campaign.executionId),
            () => carrier.calls.length === placed && carrier.onTheLine === 6,
            (row) => {
              expectConsistent(row);
              expect(row.contactsInProgress).toBeLessThanOrEqual(6);
            },
            `six calls on the line, ${placed} placed`,
          );
          // Only one runner took this turn's calls (the claim statement would keep the concurrency even if both had).
          const took = { one: dialerOne.calls.length - before.one, two: dialerTwo.calls.length - before.two };
          turns.push(took.one === 6 && took.two === 0 ? 'one' : took.two === 6 && took.one === 0 ? 'two' : JSON.stringify(took));
          // The next turn, once each runner has begun a tick after the move (a tick decides whose turn it is when it begins).
          now = new Date(now.getTime() + CLAIM_TURN_TICKS * intervalMs);
          await Promise.all([ticks(one, 2), ticks(two, 2)]);
          carrier.endAll();
        }
        const end = await waitFor(
          () => readExecution(app, campaign.executionId),
          (row) => row.status === ExecutionStatus.completed,
        );
        expect(end.contactsCompleted + end.contactsFailed).toBe(60);
      } finally {
        await Promise.all([one.stop(), two.stop()]);
        await replica?.close();
      }
      // The carrier never had more calls on the line than the execution's concurrency, whichever runner placed them.
      expect(carrier.mostAtOnce).toBe(6);
      // The turns went from one runner to the other, and between them every contact was dialed exactly once.
      const first = turns[0] === 'one' ? ['one', 'two'] : ['two', 'one'];
      expect(turns).toEqual(Array.from({ length: 10 }, (_, turn) => first[turn % 2]));
      const dialed = [...dialerOne.executionContactIds, ...dialerTwo.executionContactIds];
      expect(dialed).toHaveLength(60);
      expect(new Set(dialed).size).toBe(60);
      const notOnce = await app.sql<{ n: number }>('select count(*)::int as n from execution_contacts where execution_id = ? and attempts <> 1', [
        campaign.executionId,
      ]);
      expect(notOnce[0].n).toBe(0);
    });

    /** Holds every call until the test ends them all; counts the calls the carrier has on the line at once. */
    class HeldCarrier implements Dialer {
      readonly calls: CallRequest[] = [];
      private readonly held: ((result: CallResult) => void)[] = [];
      /** The most calls placed and not yet ended at any moment. */
      mostAtOnce = 0;

      placeCall(call: CallRequest): Promise<CallResult> {
        this.calls.push(call);
        const placed = new Promise<CallResult>((resolve) => this.held.push(resolve));
        this.mostAtOnce = Math.max(this.mostAtOnce, this.held.length);
        return placed;
      }

      get onTheLine(): number {
        return this.held.length;
      }

      endAll(): void {
        for (const end of this.held.splice(0)) end({ outcome: 'busy', reachedNodeIds: [], durationSeconds: 0 });
      }
    }

    /**
     * Runs a campaign of 40 contacts at concurrency 10 with started runners, ending the calls on the
     * line ten at a time; returns the claims that placed calls and what the carrier saw. The runners'
     * clock is pinned, so whose turn it is at the execution does not change during the run (the turns
     * are what the other test, with clocks that move, exercises).
     */
    async function heldCampaign(runners: number) {
      const carrier = new HeldCarrier();
      // Paused until every runner has seen the others' heartbeats (startTogether).
      const campaign = await createCampaign(app, { contacts: 40, maxConcurrentCalls: 10, status: ExecutionStatus.paused });
      const now = new Date();
      // On PostgreSQL each further runner has its own ORM and connection pool, as a replica would.
      const replicas = app.db.url
        ? await Promise.all(Array.from({ length: runners - 1 }, () => openDatabase({ databaseUrl: app.db.url!, dataDir: 'memory://', migrate: false })))
        : [];
      const started = Array.from({ length: runners }, (_, index) =>
        testRunner(app, { dialer: carrier, intervalMs: 20, clock: () => now, ...(index > 0 && replicas[index - 1] ? { em: replicas[index - 1]!.em } : {}) }),
      );
      const inProgress: number[] = [];
      try {
        await startTogether(started, campaign.executionId);
        for (let placed = 10; placed <= 40; placed += 10) {
          // The slots the ended calls freed are filled again, whichever runner recorded them.
          await waitFor(
            () => readExecution(app, campaign.executionId),
            () => carrier.calls.length === placed && carrier.onTheLine === 10,
            (row) => inProgress.push(row.contactsInProgress),
          );
          // Their ringing reports recorded first, so the ten ends are recorded together.
          await waitFor(
            () => app.sql<{ n: number }>(`select count(*)::int as n from calls where execution_id = ? and status = 'ringing'`, [campaign.executionId]),
            ([row]) => row!.n === 10,
          );
          carrier.endAll();
        }
        const end = await waitFor(
          () => readExecution(app, campaign.executionId),
          (row) => row.status === ExecutionStatus.completed,
        );
        expectConsistent(end);
        expect(end.contactsFailed).toBe(40);
      } finally {
        await Promise.all(started.map((runner) => runner.stop()));
        await Promise.all(replicas.map((replica) => replica.close()));
      }
      const [claims] = await app.sql<{ calls: number; contacts: number; claims: number }>(
        `select count(*)::int as calls, count(distinct execution_contact_id)::int as contacts, count(distinct claim_token)::int as claims
           from calls where execution_id = ?`,
        [campaign.executionId],
      );
      return { carrier, claims, inProgress };
    }

    it('two started runners claim every free slot of the execution, not half each: never more calls on the line than maxConcurrentCalls, no contact dialed twice, and about as many claims as one runner makes', async () => {
      const one = await heldCampaign(1);
      const two = await heldCampaign(2);
      for (const run of [one, two]) {
        // The carrier never had more than the execution's concurrency on the line, nor did the execution count more.
        expect(run.carrier.mostAtOnce).toBe(10);
        expect(Math.max(...run.inProgress)).toBeLessThanOrEqual(10);
        // Every contact dialed once.
        expect(run.claims.calls).toBe(40);
        expect(run.claims.contacts).toBe(40);
        expect(new Set(run.carrier.calls.map((call) => call.executionContactId)).size).toBe(40);
        // Ten calls ended at once free ten slots, and a claim fills them: four claims, and one more when
        // a claim came between two recorded batches. Half the concurrency per runner took eight.
        expect(run.claims.claims).toBeGreaterThanOrEqual(4);
        expect(run.claims.claims).toBeLessThanOrEqual(5);
      }
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
    await waitFor(
      async () => Number((await app.sql<{ n: number }>(sql, [executionId]))[0].n),
      (n) => n === count,
    );
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
      const leases = await app.sql<{ lease_until: Date; status: string }>('select lease_until, status from execution_contacts where execution_id = ?', [
        campaign.executionId,
      ]);
      expect(leases.every((row) => row.status === 'in_progress' && new Date(row.lease_until) > now)).toBe(true);

      hanging.finishAll({ outcome: 'answered', reachedNodeIds: ['start', 'greet'], durationSeconds: 40 });
      await dead.idle();
      const row = await readExecution(app, campaign.executionId);
      expectConsistent(row);
      expect(row).toMatchObject({ status: ExecutionStatus.completed, contactsCompleted: 2, contactsFailed: 0, creditsSpent: 2 });
      expect(row.nodeCounts).toEqual({ start: 2, greet: 2 });
      const calls = await app.sql<{ status: string; outcome: string; attempt: number }>('select status, outcome, attempt from calls where execution_id = ?', [
        campaign.executionId,
      ]);
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
      const rows = await app.sql<{ attempts: number; last_outcome: string }>('select attempts, last_outcome from execution_contacts where execution_id = ?', [
        campaign.executionId,
      ]);
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
});

describe('batching', () => {
  // Recording in batches (group commit): the statements a dialed contact costs, reports of one call
  // applied in order across batches, and claims that follow recorded calls rather than the tick.

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
      let ranMs = 0;
      const statements = await recordStatements(app, async () => {
        const started = performance.now();
        runner.start();
        end = await waitFor(
          () => readExecution(app, campaign.executionId),
          (row) => row.status === ExecutionStatus.completed,
          (row) => expect(row.contactsInProgress).toBeLessThanOrEqual(50),
        );
        ranMs = performance.now() - started;
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
      // Progress stays coalesced: the recorded calls' execution.progress at most one a second of the run (a few seconds;
      // more on a busy machine), and the last. A change of the waiting reason (the claim finding every slot busy, then
      // not) is told at once by an event of its own (claim-waiting.ts): those are the events whose reason differs from
      // the one before, and are not counted against the second.
      const progress = await app.sql<{ reason: string | null }>(
        `select payload->>'waitingReason' as reason from events where type = 'execution.progress' and payload->>'id' = ? order by created_at, id`,
        [campaign.executionId],
      );
      const changes = progress.filter((event, index) => event.reason !== (index === 0 ? null : progress[index - 1]!.reason)).length;
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress.length - changes).toBeLessThanOrEqual(Math.ceil(ranMs / 1000) + 1);
      const [completed] = await app.sql<{ n: number }>(`select count(*)::int as n from events where type = 'execution.completed' and payload->>'id' = ?`, [
        campaign.executionId,
      ]);
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
        runner.tracker.apply(call.id, {
          carrierCallId: '',
          status: CallStatus.completed,
          answeredBy: 'human',
          durationSeconds: 42,
          at: new Date(at.getTime() + 42_000),
        }),
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
    (TEST_DATABASE_URL ? it : it.skip)(
      'a claim whose execution is paused while it runs dials nothing: no call, no credit, every row still pending',
      async () => {
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
            async () =>
              (
                await other.query<{ n: number }>(
                  `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
                )
              ).rows[0]!.n,
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
        expect(row).toMatchObject({
          status: ExecutionStatus.paused,
          contactsPending: 5,
          contactsInProgress: 0,
          creditsSpent: 0,
          rows: { pending: 5, in_progress: 0, completed: 0, failed: 0 },
        });
        const attempts = await app.sql<{ n: number }>(
          'select count(*)::int as n from execution_contacts where execution_id = ? and (attempts <> 0 or claimed_by is not null)',
          [campaign.executionId],
        );
        expect(attempts[0].n).toBe(0);
        expect(await creditBalance(app, campaign.org.organizationId)).toBe(10);
      },
    );
  });
});
