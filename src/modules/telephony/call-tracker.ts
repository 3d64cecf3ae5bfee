import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { EventWriter } from '../events/event-writer.js';
import { at, placeholders, query } from '../../db/sql.js';
import { Call } from './call.entity.js';
import { callJson } from './call.types.js';
import type { AnsweredBy, CallStatusEvent } from './carrier.js';
import { isFinalCallStatus, nextCallStatus, outcomeOfEnded, type EndedOutcome } from './call-state.js';
import { CallStatus, type ProgramCarrier } from './telephony.enums.js';

/** A call row as the state machine reads it. */
export interface TrackedCall {
  id: string;
  organizationId: string;
  executionId: string | null;
  executionContactId: string | null;
  claimToken: string | null;
  attempt: number;
  status: CallStatus;
  carrier: ProgramCarrier;
  carrierConnectionId: string | null;
  carrierCallId: string | null;
  to: string;
  from: string | null;
  queuedAt: Date;
  reachedNodeIds: string[];
  creditsCharged: number;
}

/**
 * What a call's progress means to whoever placed it (the campaign runner's executions), done in
 * the transaction that moves the call: telephony tells, it never imports the runner.
 */
export interface CallEffects {
  /** The carrier says the call is live: the contact's claim is kept. */
  live(call: TrackedCall): Promise<void>;
  /** The call ended with this outcome: the contact's result is recorded. */
  ended(call: TrackedCall, outcome: EndedOutcome, durationSeconds: number): Promise<void>;
  /** `live` for a batch of calls, in as few statements as the batch allows. */
  liveAll(calls: TrackedCall[]): Promise<void>;
  /** `ended` for a batch of calls, in order, in as few statements as the batch allows. */
  endedAll(ends: EndedCall[]): Promise<void>;
  /** The carrier never took the call: the contact goes back to the queue without an attempt, to be tried in `retryAfterMs` (null: the usual wait). */
  released(call: TrackedCall, retryAfterMs: number | null): Promise<void>;
  /** The credit the call was paid with goes back to the organization. */
  refund(call: TrackedCall): Promise<void>;
}

export interface EndedCall {
  call: TrackedCall;
  outcome: EndedOutcome;
  durationSeconds: number;
}

export interface CallSink {
  transaction<T>(em: EntityManager, work: (tx: EntityManager, effects: CallEffects) => Promise<T>): Promise<T>;
}

interface CallRow {
  id: string;
  organization_id: string;
  execution_id: string | null;
  execution_contact_id: string | null;
  claim_token: string | null;
  attempt: number;
  status: CallStatus;
  carrier: ProgramCarrier;
  carrier_connection_id: string | null;
  carrier_call_id: string | null;
  to_number: string;
  from_number: string | null;
  queued_at: Date | string;
  reached_node_ids: string[] | null;
  credits_charged: number;
  answered_at: Date | string | null;
  answered_by: AnsweredBy | null;
}

function tracked(row: CallRow): TrackedCall {
  return {
    id: row.id,
    organizationId: row.organization_id,
    executionId: row.execution_id,
    executionContactId: row.execution_contact_id,
    claimToken: row.claim_token,
    attempt: row.attempt,
    status: row.status,
    carrier: row.carrier,
    carrierConnectionId: row.carrier_connection_id,
    carrierCallId: row.carrier_call_id,
    to: row.to_number,
    from: row.from_number,
    queuedAt: new Date(row.queued_at),
    reachedNodeIds: row.reached_node_ids ?? [],
    creditsCharged: row.credits_charged,
  };
}

/** call.started / call.ended: the call as REST shows it after the move, in the move's transaction. */
async function writeCallEvent(tx: EntityManager, callId: string, type: 'call.started' | 'call.ended'): Promise<void> {
  const call = await tx.findOneOrFail(Call, callId, { refresh: true });
  await EventWriter.write(tx, { organizationId: call.organizationId, type, payload: callJson(call) });
}

/** call.started / call.ended for several calls moved in one transaction: one read, one insert. */
async function writeCallEvents(tx: EntityManager, moves: { callId: string; type: 'call.started' | 'call.ended' }[]): Promise<void> {
  if (moves.length === 0) return;
  const calls = await tx.find(Call, { id: { $in: [...new Set(moves.map((move) => move.callId))] } }, { refresh: true });
  const byId = new Map(calls.map((call) => [call.id, call]));
  await EventWriter.write(
    tx,
    ...moves.map(({ callId, type }) => {
      const call = byId.get(callId)!;
      return { organizationId: call.organizationId, type, payload: callJson(call) };
    }),
  );
}

async function lockCall(tx: EntityManager, callId: string): Promise<CallRow | undefined> {
  const [row] = await query<CallRow>(tx, 'select * from calls where id = ? for update', [callId]);
  return row;
}

export type ApplyResult = 'applied' | 'ignored' | 'unknown';

/** The most reports applied in one transaction. */
export const APPLY_BATCH = 200;

interface QueuedReport {
  callId: string;
  /** null: only flow nodes reached (and who answered) are recorded, the status does not move. */
  event: CallStatusEvent | null;
  reached: string[];
  answeredBy: AnsweredBy | null;
  resolve: (result: ApplyResult) => void;
  reject: (error: unknown) => void;
}

interface CallRowState extends CallRow {
  ended_at: Date | string | null;
  duration_seconds: number | null;
  outcome: string | null;
  error_text: string | null;
  /** When a message was left on the machine that answered (voicemail-drop.ts): the call ends voicemail_left. */
  voicemail_left_at?: Date | string | null;
}

/**
 * The one place a call's state moves: status callbacks of a real carrier (after their signature
 * is checked), the simulated carrier's in-process reports, and the runner's reconciliation all
 * come through here. Each report is applied in one transaction with its effects, under a lock
 * on the call's row, so duplicates, reordered reports and reports at two replicas at once all
 * land once.
 */
export class CallTracker {
  constructor(
    private readonly em: EntityManager,
    private readonly sink: CallSink,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async get(callId: string): Promise<TrackedCall | null> {
    const [row] = await query<CallRow>(this.em.fork(), 'select * from calls where id = ?', [callId]);
    return row ? tracked(row) : null;
  }

  /** The inbound call the carrier calls `carrierCallId` on this connection. */
  async findInbound(connectionId: string, carrierCallId: string): Promise<string | null> {
    const [row] = await query<{ id: string }>(
      this.em.fork(),
      `select id from calls where carrier_connection_id = ? and carrier_call_id = ? and direction = 'inbound'`,
      [connectionId, carrierCallId],
    );
    return row?.id ?? null;
  }

  /** Reports waiting for the next batch, in arrival order. */
  private readonly queue: QueuedReport[] = [];
  private flushing: Promise<void> | null = null;

  /**
   * Applies one report of the call's progress; a report for a call we do not know changes nothing.
   * `reached`: flow nodes the call walked, recorded in the same transaction (the simulator's answer).
   *
   * Reports are applied in batches (group commit): those that arrive while a batch is being
   * written wait for the next one, and each batch is one transaction that moves its calls, writes
   * their events and records their effects together, a call at most once per batch (a second
   * report of the same call waits for the next batch, so each move is seen in order). The promise
   * settles when the report's batch has committed; a batch that fails is retried report by report,
   * so one bad report fails alone.
   */
  apply(callId: string, event: CallStatusEvent, reached: string[] = []): Promise<ApplyResult> {
    return this.enqueue({ callId, event, reached, answeredBy: event.answeredBy ?? null });
  }

  /**
   * Records flow nodes the call reached (a voice session's walk) and who answered, without moving
   * its status: the same queue and batches as `apply`, so a call's nodes are recorded one way, in
   * the order its reports arrived.
   */
  async reached(callId: string, nodeIds: string[], answeredBy: AnsweredBy | null = null): Promise<void> {
    await this.enqueue({ callId, event: null, reached: nodeIds, answeredBy });
  }

  private enqueue(report: Omit<QueuedReport, 'resolve' | 'reject'>): Promise<ApplyResult> {
    return new Promise<ApplyResult>((resolve, reject) => {
      this.queue.push({ ...report, resolve, reject });
      this.flushing ??= this.flush().finally(() => (this.flushing = null));
    });
  }

  private async flush(): Promise<void> {
    // Let the reports of this turn of the event loop join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch: QueuedReport[] = [];
      const taken = new Set<string>();
      for (let index = 0; index < this.queue.length && batch.length < APPLY_BATCH;) {
        const report = this.queue[index]!;
        if (taken.has(report.callId)) {
          index++;
          continue;
        }
        taken.add(report.callId);
        batch.push(report);
        this.queue.splice(index, 1);
      }
      try {
        const results = await this.applyBatch(batch);
        batch.forEach((report, index) => report.resolve(results[index]!));
      } catch (error) {
        if (batch.length === 1) {
          batch[0]!.reject(error);
          continue;
        }
        this.logger.warn({ err: error, reports: batch.length }, 'a batch of call reports failed; applying them one by one');
        for (const report of batch) {
          try {
            report.resolve((await this.applyBatch([report]))[0]!);
          } catch (single) {
            report.reject(single);
          }
        }
      }
    }
  }

  /** One transaction: the calls locked in id order, each report applied as `apply` describes, their effects batched. */
  private async applyBatch(reports: QueuedReport[]): Promise<ApplyResult[]> {
    return this.sink.transaction(this.em.fork(), async (tx, effects) => {
      const ids = [...new Set(reports.map((report) => report.callId))].sort();
      const rows = await query<CallRowState>(tx, `select * from calls where id in (${placeholders(ids)}) order by id for update`, ids);
      const byId = new Map(rows.map((row) => [row.id, row]));
      const changed = new Map<string, CallRowState>();
      const moves: { callId: string; type: 'call.started' | 'call.ended' }[] = [];
      const live: TrackedCall[] = [];
      const ended: EndedCall[] = [];
      const now = at(this.clock());
      const results = reports.map(({ callId, event, reached, answeredBy: reachedBy }): ApplyResult => {
        const row = byId.get(callId);
        if (!row) return 'unknown';
        if (reached.length > 0 || (event === null && reachedBy !== null && row.answered_by === null)) {
          // Each node once, in the order first reached; who answered is kept once known.
          const before = row.reached_node_ids ?? [];
          row.reached_node_ids = [...before, ...reached.filter((id, index) => !before.includes(id) && reached.indexOf(id) === index)];
          row.answered_by = row.answered_by ?? reachedBy;
          changed.set(row.id, row);
        }
        if (event === null) return 'applied';
        if (row.carrier_call_id && event.carrierCallId && row.carrier_call_id !== event.carrierCallId) {
          this.logger.warn({ callId, carrierCallId: event.carrierCallId }, 'a status report names another carrier call id; ignored');
          return 'ignored';
        }
        const next = nextCallStatus(row.status, event.status);
        if (next === null) {
          // A late or repeated live report still says the call is alive.
          if (!isFinalCallStatus(row.status) && !isFinalCallStatus(event.status)) live.push(tracked(row));
          return 'ignored';
        }
        const answeredBy = event.answeredBy ?? row.answered_by;
        const final = isFinalCallStatus(next);
        const outcome = final ? outcomeOfEnded(next, answeredBy, Boolean(row.voicemail_left_at)) : null;
        const connected = outcome === 'answered' || outcome === 'voicemail' || outcome === 'voicemail_left';
        const duration = final ? (connected ? Math.max(0, Math.round(event.durationSeconds ?? 0)) : 0) : null;
        // A call reported ended before its answer was: it was answered `duration` seconds before it ended.
        const answeredAt =
          row.answered_at ?? (next === CallStatus.in_progress ? event.at : connected ? new Date(event.at.getTime() - (duration ?? 0) * 1000) : null);
        const before = tracked(row);
        row.status = next;
        row.carrier_call_id = row.carrier_call_id ?? (event.carrierCallId || null);
        row.answered_by = answeredBy;
        // The carrier's clock and ours are combined so that a call's times stay in order: Twilio stamps its
        // callbacks in whole seconds (up to a second before our queuedAt), so an answer or an end the
        // carrier places before the call was queued is taken as the queue time, and an end before the
        // answer as the answer time; the carrier's time is kept wherever it is already in order.
        const queuedMs = new Date(row.queued_at).getTime();
        const answeredMs = answeredAt ? Math.max(new Date(answeredAt).getTime(), queuedMs) : null;
        row.answered_at = answeredMs === null ? null : at(new Date(answeredMs));
        row.ended_at = final ? at(new Date(Math.max(event.at.getTime(), answeredMs ?? queuedMs))) : null;
        row.duration_seconds = duration;
        row.outcome = outcome;
        row.error_text = event.errorText ?? row.error_text;
        changed.set(row.id, row);
        if (final) moves.push({ callId, type: 'call.ended' });
        else if (next === CallStatus.in_progress) moves.push({ callId, type: 'call.started' });
        const call = { ...before, status: next, carrierCallId: row.carrier_call_id };
        if (outcome) ended.push({ call, outcome, durationSeconds: duration ?? 0 });
        else live.push(call);
        return 'applied';
      });
      if (changed.size > 0) {
        const values = [...changed.values()].map((row) => ({
          id: row.id,
          status: row.status,
          carrier_call_id: row.carrier_call_id,
          answered_by: row.answered_by,
          answered_at: row.answered_at && at(new Date(row.answered_at)),
          ended_at: row.ended_at && at(new Date(row.ended_at)),
          duration_seconds: row.duration_seconds,
          outcome: row.outcome,
          error_text: row.error_text,
          reached_node_ids: row.reached_node_ids ?? [],
        }));
        await query(
          tx,
          `update calls c set status = v.status, carrier_call_id = v.carrier_call_id, answered_by = v.answered_by, answered_at = v.answered_at,
                  ended_at = v.ended_at, duration_seconds = v.duration_seconds, outcome = v.outcome, error_text = v.error_text,
                  reached_node_ids = v.reached_node_ids, updated_at = ?::timestamptz
             from jsonb_to_recordset(?::jsonb) as v(id uuid, status text, carrier_call_id text, answered_by text, answered_at timestamptz,
                  ended_at timestamptz, duration_seconds int, outcome text, error_text text, reached_node_ids jsonb)
            where c.id = v.id`,
          [now, JSON.stringify(values)],
        );
      }
      await writeCallEvents(tx, moves);
      if (live.length > 0) await effects.liveAll(live);
      if (ended.length > 0) await effects.endedAll(ended);
      return results;
    });
  }

  /** The call is still live as far as anyone can tell (the carrier could not be asked): its claim is kept. */
  async keepAlive(callId: string): Promise<void> {
    await this.sink.transaction(this.em.fork(), async (tx, effects) => {
      const row = await lockCall(tx, callId);
      if (row && !isFinalCallStatus(row.status)) await effects.live(tracked(row));
    });
  }

  /** The carrier took the call and gave it this id (its callbacks may have told us already). */
  async placed(callId: string, carrierCallId: string | null): Promise<void> {
    await query(this.em.fork(), 'update calls set carrier_call_id = coalesce(carrier_call_id, ?), updated_at = ?::timestamptz where id = ?', [
      carrierCallId,
      at(this.clock()),
      callId,
    ]);
  }

  /**
   * The carrier did not take the call (`attempted`: false — it was down, or has no record of it)
   * or refused it (`attempted`: true — e.g. a number it cannot call). Either way the call fails
   * with the reason and its credit goes back; a refused call counts as the contact's attempt, one
   * never taken goes back to the queue without one.
   */
  async notPlaced(callId: string, errorText: string, attempted: boolean, retryAfterMs: number | null = null): Promise<ApplyResult> {
    return this.sink.transaction(this.em.fork(), async (tx, effects) => {
      const row = await lockCall(tx, callId);
      if (!row) return 'unknown';
      if (isFinalCallStatus(row.status)) return 'ignored';
      const now = this.clock();
      await query(
        tx,
        `update calls set status = 'failed', outcome = 'failed', error_text = ?, ended_at = ?::timestamptz, duration_seconds = 0,
                credits_charged = 0, updated_at = ?::timestamptz where id = ?`,
        [errorText.slice(0, 2000), at(now), at(now), callId],
      );
      await writeCallEvent(tx, callId, 'call.ended');
      const call = { ...tracked(row), status: CallStatus.failed };
      if (row.credits_charged > 0) await effects.refund(call);
      if (attempted) await effects.ended(call, 'failed', 0);
      else await effects.released(call, retryAfterMs);
      return 'applied';
    });
  }

  /**
   * A live call that the gateway itself cannot carry on (its voice provider failed, its agent is
   * gone): it ends `failed` with the reason on the record, the contact's attempt counted (so the
   * program's retry policy decides what happens next). Its credit is kept once anything was said on
   * it (`spoken`, the default: the call was connected and talked); a call that failed before a word was
   * said on it gives its credit back, as one the carrier never took. A call already in a final status
   * is left as it is.
   */
  async failLive(callId: string, errorText: string, options: { spoken?: boolean } = {}): Promise<ApplyResult> {
    const refunded = options.spoken === false;
    return this.sink.transaction(this.em.fork(), async (tx, effects) => {
      const row = await lockCall(tx, callId);
      if (!row) return 'unknown';
      if (isFinalCallStatus(row.status)) return 'ignored';
      const now = this.clock();
      const duration = row.answered_at ? Math.max(0, Math.round((now.getTime() - new Date(row.answered_at).getTime()) / 1000)) : 0;
      await query(
        tx,
        `update calls set status = 'failed', outcome = 'failed', error_text = ?, ended_at = ?::timestamptz, duration_seconds = ?,
                answered_at = coalesce(answered_at, ?::timestamptz), credits_charged = case when ? then 0 else credits_charged end, updated_at = ?::timestamptz where id = ?`,
        [errorText.slice(0, 2000), at(now), duration, at(now), refunded, at(now), callId],
      );
      await writeCallEvent(tx, callId, 'call.ended');
      const call = { ...tracked(row), status: CallStatus.failed };
      if (refunded && row.credits_charged > 0) await effects.refund(call);
      await effects.ended(call, 'failed', duration);
      return 'applied';
    });
  }
}
