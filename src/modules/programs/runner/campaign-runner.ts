import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ExecutionEvents } from '../execution-events.js';
import { recordCall } from './call-recorder.js';
import type { CallResult, Dialer } from './dialer.js';
import { recoverExpiredLeases, renewLeases } from './leases.js';
import { advanceSchedules } from './schedule.js';
import { claimCalls, listRunnable, type ClaimedCall } from './work-queue.js';

export type TickHook = (now: Date) => Promise<void>;

export interface CampaignRunnerOptions {
  /** The root entity manager; every tick and every recorded call works in its own fork. */
  em: EntityManager;
  dialer: Dialer;
  logger: Logger;
  /** Pause between the end of one tick and the start of the next. Default 1000. */
  intervalMs?: number;
  /** How long a claimed row is held before another runner may take it over. Default 60000. */
  leaseMs?: number;
  /** How long stop() waits for calls in flight. Default 10000. */
  stopGraceMs?: number;
  /** Written (with a claim number) to execution_contacts.claimed_by. Default host-pid-random. */
  id?: string;
  /** The runner's notion of now (tests pin it). Without one, leases run on the database clock. */
  clock?: () => Date;
  /** Where the executions' state changes go; default: logged through `logger`. */
  events?: ExecutionEvents;
}

const FAILED_CALL: CallResult = { outcome: 'failed', reachedNodeIds: [], durationSeconds: 0 };

/**
 * The background worker that advances executions: each tick renews its own leases, takes back
 * expired ones, starts and stops scheduled executions, claims due contacts of running executions
 * and places their calls through the Dialer, then runs the onTick hooks. Calls run in the
 * background and are recorded as they end; the next tick fills the slots they free.
 */
export class CampaignRunner {
  readonly id: string;
  /** Called once per tick after the campaign work, in order; an error is logged and the rest still run. */
  readonly onTick: TickHook[] = [];
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly stopGraceMs: number;
  private readonly clock: () => Date;
  private readonly logger: Logger;
  private readonly events: ExecutionEvents;
  private readonly calls = new Map<Promise<void>, string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopRequested = false;
  private claims = 0;

  constructor(private readonly options: CampaignRunnerOptions) {
    this.id = options.id ?? `${hostname().slice(0, 24)}-${process.pid}-${randomBytes(4).toString('hex')}`;
    // claimed_by holds `<id>#<claim number>` in 64 characters.
    if (this.id.length > 48) throw new Error('A campaign runner id is at most 48 characters');
    this.intervalMs = options.intervalMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 10_000;
    this.clock = options.clock ?? (() => new Date());
    this.logger = options.logger.child({ runner: this.id });
    this.events = options.events ?? new ExecutionEvents(this.logger);
  }

  /** Calls placed and not yet recorded. */
  get callsInFlight(): number {
    return this.calls.size;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopRequested = false;
    this.schedule(0);
    this.logger.info({ intervalMs: this.intervalMs, leaseMs: this.leaseMs }, 'campaign runner started');
  }

  /** No new tick or claim; waits for the current tick and, up to `graceMs`, for calls in flight. */
  async stop(graceMs = this.stopGraceMs): Promise<void> {
    this.started = false;
    this.stopRequested = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    if (this.calls.size > 0) {
      let timeout: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timeout = setTimeout(resolve, graceMs)));
      await Promise.race([this.idle(), bound]);
      clearTimeout(timeout);
      if (this.calls.size > 0) this.logger.warn({ calls: this.calls.size }, 'stopped with calls in flight; their leases will expire and another runner retries them');
    }
    this.logger.info('campaign runner stopped');
  }

  /** Resolves when every call placed so far has been recorded (or dropped). */
  async idle(): Promise<void> {
    while (this.calls.size > 0) await Promise.allSettled([...this.calls.keys()]);
  }

  /** One pass; a tick asked for while one runs joins that one, so ticks never overlap. */
  tick(): Promise<void> {
    this.running ??= this.work().finally(() => (this.running = null));
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    this.timer = setTimeout(() => {
      void this.tick().then(() => this.schedule(this.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private async work(): Promise<void> {
    const now = this.clock();
    const em = this.options.em.fork();
    // An injected clock also measures the leases (deterministic tests); otherwise the database's now() does.
    const leaseClock = this.options.clock ? now : null;
    await this.step('renew leases', () => renewLeases(em, [...new Set(this.calls.values())], this.leaseMs, leaseClock, now));
    await this.step('recover leases', async () => {
      const recovered = await recoverExpiredLeases(em, leaseClock, now);
      if (recovered > 0) this.logger.warn({ recovered }, 'took back contacts whose lease expired');
    });
    await this.step('advance schedules', () => advanceSchedules(em, now, this.events));
    await this.step('claim calls', async () => {
      for (const execution of await listRunnable(em)) {
        if (this.stopRequested) return;
        const token = `${this.id}#${++this.claims}`;
        try {
          for (const call of await claimCalls(em, execution, { now, token, leaseMs: this.leaseMs, leaseClock, events: this.events })) this.place(call);
        } catch (error) {
          this.logger.error({ err: error, executionId: execution.id }, 'claiming calls failed');
        }
      }
    });
    for (const hook of this.onTick) await this.step('tick hook', () => hook(now));
  }

  private async step(name: string, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.logger.error({ err: error, step: name }, `campaign runner: ${name} failed`);
    }
  }

  /** Dials in the background; the result is recorded in its own fork and transaction. */
  private place(call: ClaimedCall): void {
    const done = (async () => {
      let result: CallResult;
      try {
        result = await this.options.dialer.placeCall({
          executionContactId: call.executionContactId,
          phone: call.phone,
          timeZone: call.timeZone,
          attempt: call.attempt,
          flow: call.execution.flow,
          agentId: call.execution.agentId,
        });
      } catch (error) {
        this.logger.warn({ err: error, executionContactId: call.executionContactId }, 'the dialer failed; recording the call as failed');
        result = FAILED_CALL;
      }
      try {
        const outcome = await recordCall(this.options.em.fork(), call, result, this.clock(), this.events);
        if (outcome === 'dropped') this.logger.warn({ executionContactId: call.executionContactId }, 'lease was taken over; result dropped');
      } catch (error) {
        this.logger.error({ err: error, executionContactId: call.executionContactId }, 'recording a call failed; the lease will expire and the contact is retried');
      }
    })();
    this.calls.set(done, call.token);
    void done.finally(() => this.calls.delete(done));
  }
}
