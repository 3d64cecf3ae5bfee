import { compactListCounts } from '../../../db/list-counts.js';
import { VoiceEngine } from '../../voice/voice-session.js';
import type { ConversationService } from '../../agents/conversation.service.js';
import type { KnowledgePort } from '../../agents/agent.ports.js';
import { RequestContext } from '@mikro-orm/core';
import { CallConversations } from '../../voice/realtime/call-conversation.js';
import { BuiltinRecognizer, BuiltinSynthesizer } from '../../voice/streaming/builtin-speech.js';
import { SimulatedStreams } from '../../voice/streaming/simulated-stream.js';
import type { StreamingDeps } from '../../voice/streaming/streaming-call.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { ExecutionEvents } from '../execution-events.js';
import { CarrierError, type CarrierAccount, type CarrierAdapter } from '../../telephony/carrier.js';
import { CallTracker } from '../../telephony/call-tracker.js';
import { ProgramCarrier, type CarrierKind } from '../../telephony/telephony.enums.js';
import type { Dialer } from './dialer.js';
import { ExecutionCallSink } from './execution-call-sink.js';
import { recoverExpiredLeases, renewLeases } from './leases.js';
import { releaseReservations, renewReservations, type Reservation } from './credit-reservations.js';
import { reconcileExpiredCalls } from './reconcile.js';
import { SIMULATED_ACCOUNT, SimulatedCarrier, type SimulatedSwitch } from './simulated-carrier.js';
import { advanceSchedules } from './schedule.js';
import { ClaimRaced, claimCalls, listRunnable, type RunnableExecution } from './work-queue.js';
import { claimDirectCalls, renewDirectLeases, type Placement } from './direct-calls.js';
import { waitingMessage } from './waiting.js';
import { WaitingReason } from '../program.enums.js';
import { query } from '../../../db/sql.js';
import { VoicemailDrop } from '../../voice/voicemail-drop.js';
import { RecordingLedger } from '../../recordings/recording-ledger.js';

/** How long a contact whose call the carrier never took (down, 5xx) waits before it is tried again. */
export const PLACEMENT_RETRY_MS = 30_000;

/** How many ticks a started runner's turn at an execution lasts, when several runners are started. */
export const CLAIM_TURN_TICKS = 10;

export type TickHook = (now: Date) => Promise<void>;

/** The real carriers a runner may place calls through, and how it reaches them. */
export interface RunnerCarriers {
  /** Each registered carrier's REST side, by its kind. */
  adapters: Partial<Record<CarrierKind, CarrierAdapter>>;
  /** A connection's account, its auth token opened for the call. */
  account: (connectionId: string) => Promise<CarrierAccount>;
  /** PUBLIC_URL: where the carrier's callbacks reach the gateway. */
  publicUrl?: string;
}

export interface CampaignRunnerOptions {
  /** The root entity manager; every tick and every recorded call works in its own fork. */
  em: EntityManager;
  /** Copies the audiences of preparing executions into their work queues (ExecutionSnapshots), each tick before the schedules. */
  snapshots?: { prepare(): Promise<number> };
  /** What the simulated carrier's calls do (the seeded SimulatedDialer). */
  dialer: Dialer;
  /** Real carriers; without them only simulator programs are called. */
  carriers?: RunnerCarriers;
  /** How long a contact whose call the carrier never took waits before it is tried again. Default 30000. */
  placementRetryMs?: number;
  /** The simulated carrier's records; default the process's, shared by its runners (tests pass one to play another process). */
  simulatedSwitch?: SimulatedSwitch;
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
  /** Where the executions' state changes go: the gateway's one ExecutionEvents (services.executionEvents). */
  events: ExecutionEvents;
  /** The agents' conversations: given, the simulated carrier talks answered calls through the voice engine with a scripted caller. */
  conversations?: ConversationService;
  /**
   * The agents' model and knowledge: given with `conversations`, a simulated call whose agent is a
   * streaming one is played over a simulated media stream through the streaming pipeline (the builtin
   * recognizer and synthesizer); without it, such a call ends at its stream.
   */
  streaming?: { model: StreamingDeps['model']; knowledge: KnowledgePort; doNotCall: StreamingDeps['doNotCall']; tools?: StreamingDeps['tools'] };
}

/**
 * The background worker that advances executions: each tick renews its own leases, reconciles
 * calls whose lease ran out by asking their carrier, takes back other expired rows, starts and
 * stops scheduled executions, claims due contacts of running executions and places their calls
 * through their program's carrier, then runs the onTick hooks. Placing a call only starts it:
 * its progress and end arrive later as carrier reports (webhooks, or the simulator's in-process
 * ones) through the CallTracker, which records them; the next tick fills the slots they free.
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
  /** Placements in flight (the carrier has not answered yet), by claim token. */
  private readonly calls = new Map<Promise<void>, string>();
  readonly tracker: CallTracker;
  readonly simulator: SimulatedCarrier;
  private readonly placementRetryMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopRequested = false;
  private claims = 0;
  /** A claim pass started because recorded calls freed slots (between ticks); at most one at a time. */
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /** The next claim pass looks for queued single calls (set by each tick and by wake()). */
  private directDue = true;
  /** Started runners with a fresh heartbeat, this one included, by id (only this one until the first tick tells). */
  private runners: string[];

  constructor(private readonly options: CampaignRunnerOptions) {
    this.id = options.id ?? `${hostname().slice(0, 24)}-${process.pid}-${randomBytes(4).toString('hex')}`;
    // claimed_by holds `<id>#<claim number>` in 64 characters.
    if (this.id.length > 48) throw new Error('A campaign runner id is at most 48 characters');
    this.runners = [this.id];
    this.intervalMs = options.intervalMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 10_000;
    this.clock = options.clock ?? (() => new Date());
    this.logger = options.logger.child({ runner: this.id });
    this.events = options.events;
    this.placementRetryMs = options.placementRetryMs ?? PLACEMENT_RETRY_MS;
    const sink = new ExecutionCallSink({
      events: this.events,
      logger: this.logger,
      leaseMs: this.leaseMs,
      retryMs: this.placementRetryMs,
      clock: options.clock,
      onFreed: () => this.claimSoon(),
    });
    this.tracker = new CallTracker(options.em, sink, this.logger, this.clock);
    this.simulator = new SimulatedCarrier(options.dialer, this.logger, this.clock, options.simulatedSwitch);
    this.simulator.attach(this.tracker);
    this.simulator.keepRecordingsIn(new RecordingLedger(options.em));
    this.simulator.attachVoicemail(new VoicemailDrop(options.em, this.tracker, this.logger));
    // With the conversation service, simulated calls are talked through the voice engine (a scripted caller).
    if (options.conversations) {
      const conversations = options.conversations;
      const streams = options.streaming
        ? new SimulatedStreams({
            em: options.em,
            conversations: new CallConversations(options.em),
            tracker: this.tracker,
            knowledge: options.streaming.knowledge,
            model: options.streaming.model,
            doNotCall: options.streaming.doNotCall,
            tools: options.streaming.tools,
            withContext: (work) => RequestContext.create(options.em, work),
            endConversation: (organizationId, conversationId, failed) =>
              RequestContext.create(options.em, () => conversations.closeForCall(organizationId, conversationId, failed)),
            recognizers: { builtin: new BuiltinRecognizer() },
            synthesizers: { builtin: new BuiltinSynthesizer() },
            logger: this.logger,
          })
        : undefined;
      this.simulator.attachVoice(new VoiceEngine(options.em, this.tracker, conversations, this.logger), streams);
    }
  }

  /** Calls being placed, and simulated calls not yet ended. */
  get callsInFlight(): number {
    return this.calls.size + this.simulator.live;
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
    await this.claiming;
    // Its turns go to the others at once, and the credits it reserved to their organizations.
    await query(this.options.em.fork(), 'delete from runner_heartbeats where id = ?', [this.id]).catch((error: unknown) =>
      this.logger.warn({ err: error }, 'could not remove the runner heartbeat; it ages out'),
    );
    await releaseReservations(this.options.em.fork(), { runnerId: this.id }).catch((error: unknown) =>
      this.logger.warn({ err: error }, 'could not give back the credits this runner reserved; another runner does when their lease runs out'),
    );
    this.runners = [this.id];
    if (this.callsInFlight > 0) {
      let timeout: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => (timeout = setTimeout(resolve, graceMs)));
      await Promise.race([this.idle(), bound]);
      clearTimeout(timeout);
      if (this.callsInFlight > 0)
        this.logger.warn({ calls: this.callsInFlight }, 'stopped with calls in flight; when their leases expire a runner asks their carrier how they ended');
    }
    this.logger.info('campaign runner stopped');
  }

  /** Resolves when every call placed so far has been placed, and every simulated one has ended and been recorded. */
  async idle(): Promise<void> {
    while (this.calls.size > 0 || this.simulator.live > 0 || this.claiming) {
      await Promise.allSettled([...this.calls.keys()]);
      await this.simulator.idle();
      await this.claiming;
    }
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
    if (this.started) await this.step('heartbeat', () => this.heartbeat(em));
    await this.step('renew leases', async () => {
      const tokens = [...new Set(this.calls.values())];
      await renewLeases(em, tokens, this.leaseMs, leaseClock, now);
      await renewDirectLeases(em, tokens, this.leaseMs, leaseClock);
      await renewReservations(em, this.reservation(leaseClock));
    });
    await this.step('reconcile calls', async () => {
      const reconciled = await reconcileExpiredCalls(em, {
        tracker: this.tracker,
        carrier: (kind) => this.carrier(kind),
        account: (kind, connectionId) => this.account(kind, connectionId),
        leaseClock,
        leaseMs: this.leaseMs,
        logger: this.logger,
      });
      if (reconciled > 0) this.logger.warn({ reconciled }, 'asked the carrier about calls whose lease expired');
    });
    await this.step('recover leases', async () => {
      const recovered = await recoverExpiredLeases(em, leaseClock, now);
      if (recovered > 0) this.logger.warn({ recovered }, 'took back contacts whose lease expired');
    });
    await this.step('fold list counts', () => compactListCounts(em));
    await this.step('prepare executions', async () => {
      await this.options.snapshots?.prepare();
    });
    await this.step('advance schedules', () => advanceSchedules(em, now, this.events));
    await this.step('return reserved credits', async () => {
      const returned = await releaseReservations(em, { stale: true, leaseClock });
      if (returned > 0)
        this.logger.info({ credits: returned }, 'gave back credits reserved for executions no longer running, or by runners whose lease ran out');
    });
    this.directDue = true;
    await this.step('claim calls', () => this.claimOnTick(em, now, leaseClock));
    for (const hook of this.onTick) await this.step('tick hook', () => hook(now));
  }

  /**
   * A started runner says it is alive and learns which runners are (heartbeats of the last three
   * ticks, at least 3 s): they take turns at each execution (claimsMyTurn).
   */
  private async heartbeat(em: EntityManager): Promise<void> {
    const others = await query<{ id: string }>(
      em,
      `with beat as (insert into runner_heartbeats (id, seen_at) values (?, clock_timestamp())
                     on conflict (id) do update set seen_at = excluded.seen_at returning id)
       select id from runner_heartbeats
        where seen_at > clock_timestamp() - ? * interval '1 millisecond' and id <> (select id from beat)`,
      [this.id, Math.max(3 * this.intervalMs, 3000)],
    );
    this.runners = [this.id, ...others.map((row) => row.id)].sort();
  }

  /**
   * Whether this runner claims for the execution now. Started runners take turns at an execution,
   * CLAIM_TURN_TICKS ticks each, in id order, each execution's turns starting at another runner: in
   * its turn a runner fills every free slot of the execution, whoever's calls freed it, so its claims
   * and the recording of their calls come in batches as large as one runner's, and the others spend
   * nothing on it. Runners that see a different list for a moment (one started or stopped) may both
   * claim, or neither until their next heartbeat: the claim statement keeps the concurrency either way.
   * A runner driven by hand (tick() without start()) always claims.
   */
  private claimsMyTurn(executionId: string, now: Date): boolean {
    if (!this.started || this.runners.length < 2) return true;
    const turn = Math.floor(now.getTime() / (CLAIM_TURN_TICKS * this.intervalMs));
    return this.runners[(turn + spread(executionId)) % this.runners.length] === this.id;
  }

  /** Places the queued single calls (POST /api/calls), then claims due contacts of every running execution with free slots whose turn it is, and places their calls. */
  private async claimAll(em: EntityManager, now: Date, leaseClock: Date | null): Promise<void> {
    // Single calls are looked for once a tick and when one was queued here, not on every pass a freed slot starts.
    if (this.directDue) {
      this.directDue = false;
      await this.step('place single calls', () => this.placeDirect(em, leaseClock));
    }
    for (const execution of await listRunnable(em)) {
      if (this.stopRequested) return;
      if (!this.claimsMyTurn(execution.id, now)) continue;
      const token = `${this.id}#${++this.claims}`;
      try {
        const reservation = this.reservation(leaseClock);
        const claim = await claimCalls(em, execution, {
          now,
          token,
          leaseMs: this.leaseMs,
          leaseClock,
          events: this.events,
          reservation,
          carrierMissing: this.carrierMissing(execution),
        });
        for (const call of claim.calls) this.place(call);
        if (claim.waiting) this.logWaiting(execution, claim.waiting);
      } catch (error) {
        if (error instanceof ClaimRaced) {
          // Rolled back, nothing placed: claim again with what the execution is now.
          this.logger.debug({ executionId: execution.id }, error.message);
          this.claimSoon();
        } else this.logger.error({ err: error, executionId: execution.id }, 'claiming calls failed');
      }
    }
  }

  /** Takes the oldest queued single calls on the carriers this runner can place, and places them. */
  private async placeDirect(em: EntityManager, leaseClock: Date | null): Promise<void> {
    if (this.stopRequested) return;
    const real = this.options.carriers?.publicUrl ? (Object.keys(this.options.carriers.adapters) as ProgramCarrier[]) : [];
    const token = `${this.id}#${++this.claims}`;
    const calls = await claimDirectCalls(em, { token, carriers: [ProgramCarrier.simulator, ...real], leaseMs: this.leaseMs, leaseClock });
    for (const call of calls) this.place(call);
  }

  /** A single call was queued (POST /api/calls): a started runner places it now rather than at its next tick. */
  wake(): void {
    this.directDue = true;
    this.claimSoon();
  }

  /**
   * The tick's claim pass, serialized with the passes claimSoon starts as those are with each other:
   * two passes of one runner would only queue on each execution's claim lock (a second pass of the
   * same runner found its first one holding it, and waited). While a pass runs, the tick leaves the
   * claiming to it and asks for one more after it. A runner driven by hand claims on its tick.
   */
  private async claimOnTick(em: EntityManager, now: Date, leaseClock: Date | null): Promise<void> {
    if (!this.started) return this.claimAll(em, now, leaseClock);
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claimAgain = false;
    this.claiming = this.claimAll(em, now, leaseClock).finally(() => {
      this.claiming = null;
      if (this.claimAgain) this.claimSoon();
    });
    await this.claiming;
  }

  /** This runner's credit reservations: held under its id, on the leases' clock. */
  private reservation(leaseClock: Date | null): Reservation {
    return { runnerId: this.id, leaseMs: this.leaseMs, leaseClock };
  }

  /**
   * Recorded calls freed slots: a started runner claims again now rather than at its next tick, so
   * a campaign's pace is its calls', not the tick's. Passes never overlap; one asked for while one
   * runs follows it. A runner driven by hand (tick() without start()) claims only on its ticks.
   */
  private claimSoon(): void {
    if (!this.started || this.stopRequested) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = (async () => {
      do {
        this.claimAgain = false;
        const now = this.clock();
        await this.step('claim calls', () => this.claimAll(this.options.em.fork(), now, this.options.clock ? now : null));
      } while (this.claimAgain && this.started && !this.stopRequested);
    })().finally(() => (this.claiming = null));
  }

  private async step(name: string, run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.logger.error({ err: error, step: name }, `campaign runner: ${name} failed`);
    }
  }

  /** What this runner lacks to place the execution's calls through its program's carrier (nothing is claimed then), if anything. */
  private carrierMissing(execution: RunnableExecution): string | null {
    if (!this.carrier(execution.carrier)) return `no ${execution.carrier} carrier is configured in this gateway`;
    if (execution.carrier !== ProgramCarrier.simulator && !this.options.carriers?.publicUrl)
      return 'PUBLIC_URL is not set, so the carrier could not report the calls';
    return null;
  }

  /**
   * One line when an execution starts waiting for a new reason (the claim writes it only then): at
   * info, but at debug for the limits a busy campaign meets at every call (its concurrency, its carrier's pace).
   */
  private logWaiting(execution: RunnableExecution, waiting: { reason: WaitingReason; nextCallAt: Date | null; detail?: string }): void {
    const routine = waiting.reason === WaitingReason.concurrency_limit || waiting.reason === WaitingReason.carrier_pacing;
    const fields = {
      executionId: execution.id,
      programId: execution.programId,
      organizationId: execution.organizationId,
      waitingReason: waiting.reason,
      nextCallAt: waiting.nextCallAt?.toISOString() ?? null,
    };
    if (routine) this.logger.debug(fields, waitingMessage(waiting));
    else this.logger.info(fields, waitingMessage(waiting));
  }

  private carrier(kind: ProgramCarrier): CarrierAdapter | undefined {
    return kind === ProgramCarrier.simulator ? this.simulator : this.options.carriers?.adapters[kind];
  }

  private async account(kind: ProgramCarrier, connectionId: string | null): Promise<CarrierAccount> {
    if (kind === ProgramCarrier.simulator) return SIMULATED_ACCOUNT;
    if (!connectionId || !this.options.carriers) throw new CarrierError('rejected', `No ${kind} connection to place the call with`);
    return this.options.carriers.account(connectionId);
  }

  /** Where the carrier reports this call's progress and asks what to say, under PUBLIC_URL. */
  private callbackUrls(call: Placement): { statusCallbackUrl: string; answerUrl: string; recordingCallbackUrl: string; machineVerdictUrl: string | null } {
    const base = `${this.options.carriers?.publicUrl ?? ''}/telephony/${call.execution.carrier}/${call.execution.connectionId ?? 'simulator'}`;
    const query = `callId=${encodeURIComponent(call.callId)}`;
    return {
      statusCallbackUrl: `${base}/status?${query}`,
      answerUrl: `${base}/answer?${query}`,
      recordingCallbackUrl: `${base}/recording?${query}`,
      // Detection in the background (no dead air at the answer); the verdict comes to /amd (amd-webhooks.rest.ts).
      machineVerdictUrl: call.execution.carrier === ProgramCarrier.simulator ? null : `${base}/amd?${query}`,
    };
  }

  /**
   * Places the call in the background. The carrier taking it is all that is awaited; its end is
   * recorded when the carrier reports it. A carrier that refuses the call (4xx) fails it as an
   * attempt; one that is down, answers 5xx or cannot be reached leaves the contact to be tried
   * again later without an attempt. Either way the credit goes back.
   */
  private place(call: Placement): void {
    const done = (async () => {
      const { carrier } = call.execution;
      try {
        const adapter = this.carrier(carrier);
        if (!adapter) throw new CarrierError('unavailable', `No ${carrier} carrier is configured in this gateway`);
        if (carrier !== ProgramCarrier.simulator && !this.options.carriers?.publicUrl) {
          throw new CarrierError('unavailable', 'PUBLIC_URL is not set, so the carrier could not report the call');
        }
        // The simulator's account is at hand: its call starts before place() returns, as the tests observe.
        const account = carrier === ProgramCarrier.simulator ? SIMULATED_ACCOUNT : await this.account(carrier, call.execution.connectionId);
        const { recordingCallbackUrl, ...urls } = this.callbackUrls(call);
        const { recording } = call.execution;
        const { carrierCallId } = await adapter.placeCall(account, {
          callId: call.callId,
          to: call.phone,
          from: call.execution.fromNumber,
          ...urls,
          machineDetection: true,
          attempt: call.attempt,
          // Without a consent sentence the carrier records from the answer; with one, the answer's TwiML starts it once consent is given.
          recording: recording && !recording.consent ? { channels: recording.channels, statusCallbackUrl: recordingCallbackUrl } : null,
          context: {
            executionContactId: call.executionContactId,
            timeZone: call.timeZone,
            agentId: call.execution.agentId,
            flow: call.execution.flow,
            utterances: call.execution.utterances,
            recording,
          },
        });
        // The simulator's own reports carry its call id; a real carrier's may not have come yet.
        if (adapter !== this.simulator) await this.tracker.placed(call.callId, carrierCallId);
      } catch (error) {
        const refused = error instanceof CarrierError && error.kind === 'rejected';
        const reason = error instanceof Error ? error.message : String(error);
        this.logger.warn(
          { err: error, callId: call.callId, executionContactId: call.executionContactId, carrier },
          refused ? 'the carrier refused the call' : 'the carrier did not take the call; the contact is tried again later',
        );
        try {
          await this.tracker.notPlaced(call.callId, reason, refused);
        } catch (recordError) {
          this.logger.error(
            { err: recordError, callId: call.callId },
            'recording a call the carrier did not take failed; its lease will expire and it is reconciled',
          );
        }
      }
    })();
    this.calls.set(done, call.token);
    void done.finally(() => this.calls.delete(done));
  }
}

/** A number from an id, the same in every replica, so each execution's turns start at a different runner. */
function spread(id: string): number {
  let hash = 0;
  for (let index = 0; index < id.length; index++) hash = (hash * 31 + id.charCodeAt(index)) >>> 0;
  return hash;
}
