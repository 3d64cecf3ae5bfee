import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { CallEffects, CallSink, EndedCall, TrackedCall } from '../../telephony/call-tracker.js';
import { CreditEntryKind } from '../../organizations/credit-ledger.entity.js';
import { recordLedgerEntry } from '../../organizations/credit.service.js';
import type { ExecutionEvents, RecordTransition } from '../execution-events.js';
import { recordCallsIn } from './call-recorder.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { at, query } from '../../../db/sql.js';
import { loadExecutions } from './work-queue.js';
import { NOT_PLACED } from './claim-waiting.js';
import { releaseReservations } from './credit-reservations.js';
import { ExecutionStatus } from '../program.enums.js';
import { CREDIT_BALANCE_SQL } from '../../organizations/organization.entity.js';

export interface ExecutionCallSinkOptions {
  events: ExecutionEvents;
  logger: Logger;
  /** How long a live call's claim is held from each report that it is live. */
  leaseMs: number;
  /** How long a contact whose call the carrier never took waits before it is tried again. */
  retryMs: number;
  /** The runner's injected clock (tests); leases then run on it rather than the database's. */
  clock?: () => Date;
  /** Called after a transaction that recorded ended calls has committed: slots are free (the runner claims again). */
  onFreed?: () => void;
}

/**
 * What a call's progress does to its execution: the call tracker (telephony) calls these inside
 * the transaction that moves the call, so a call and its contact's result commit together.
 */
export class ExecutionCallSink implements CallSink {
  constructor(private readonly options: ExecutionCallSinkOptions) {}

  async transaction<T>(em: EntityManager, work: (tx: EntityManager, effects: CallEffects) => Promise<T>): Promise<T> {
    let freed = false;
    /** Executions these calls completed or paused: the credits runners reserved for them go back once this commits. */
    const stopped = new Set<string>();
    const result = await this.options.events.transaction(em, (tx, record) => {
      freed = false;
      stopped.clear();
      const noting: RecordTransition = (transition) => {
        if (transition.to !== ExecutionStatus.running) stopped.add(transition.executionId);
        record(transition);
      };
      return work(
        tx,
        this.effects(tx, noting, () => (freed = true)),
      );
    });
    if (stopped.size > 0) {
      await releaseReservations(em, { executionIds: [...stopped] }).catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'could not give back reserved credits yet; the next tick does'),
      );
    }
    if (freed) this.options.onFreed?.();
    return result;
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  private effects(tx: EntityManager, record: RecordTransition, freed: () => void): CallEffects {
    const { leaseMs, retryMs, logger } = this.options;
    const leaseClock = this.options.clock ? this.now() : null;
    const liveAll = async (calls: TrackedCall[]) => {
      // A single call (POST /api/calls) holds its lease on its own row.
      const direct = calls.filter((call) => !call.executionId && call.claimToken).map((call) => call.id);
      if (direct.length > 0) {
        await query(tx, `update calls set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond' where id in (${direct.map(() => '?').join(', ')})`, [
          leaseNow(leaseClock),
          leaseMs,
          ...direct,
        ]);
      }
      const claimed = calls.filter((call) => call.executionContactId && call.claimToken);
      if (claimed.length === 0) return;
      await query(
        tx,
        `update execution_contacts ec set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
           from (select v.id, v.token from jsonb_to_recordset(?::jsonb) as v(id uuid, token text)
                   join execution_contacts locked on locked.id = v.id order by v.id for no key update of locked) v
          where ec.id = v.id and ec.claimed_by = v.token and ec.status = 'in_progress'`,
        [leaseNow(leaseClock), leaseMs, JSON.stringify(claimed.map((call) => ({ id: call.executionContactId, token: call.claimToken })))],
      );
    };
    const endedAll = async (ends: EndedCall[]) => {
      const ofExecutions = ends.filter(({ call }) => call.executionContactId && call.claimToken && call.executionId);
      if (ofExecutions.length === 0) return;
      const executions = await loadExecutions(tx, [...new Set(ofExecutions.map(({ call }) => call.executionId!))]);
      const known = ofExecutions.filter(({ call }) => executions.has(call.executionId!));
      const results = await recordCallsIn(
        tx,
        record,
        known.map(({ call, outcome, durationSeconds }) => ({
          claim: {
            executionContactId: call.executionContactId!,
            token: call.claimToken!,
            attempt: call.attempt,
            execution: executions.get(call.executionId!)!,
          },
          result: { outcome, reachedNodeIds: call.reachedNodeIds, durationSeconds },
        })),
        this.now(),
      );
      results.forEach((result, index) => {
        if (result === 'recorded') freed();
        else
          logger.warn(
            { callId: known[index]!.call.id, executionContactId: known[index]!.call.executionContactId },
            'the contact was claimed again meanwhile; this call is kept but not counted',
          );
      });
    };
    return {
      live: (call) => liveAll([call]),
      liveAll,
      ended: (call, outcome, durationSeconds) => endedAll([{ call, outcome, durationSeconds }]),
      endedAll,
      released: async (call, retryAfterMs) => this.release(tx, call, retryAfterMs ?? retryMs),
      refund: async (call) => this.refund(tx, call),
    };
  }

  /**
   * The carrier never took the call: the row goes back to pending, its attempt not counted, tried again
   * in `retryMs`; its last outcome says so, which is how the claims tell this wait (carrier_unavailable) from a retry's.
   */
  private async release(tx: EntityManager, call: TrackedCall, retryMs: number): Promise<void> {
    if (!call.executionContactId || !call.claimToken || !call.executionId) return;
    const [row] = await query<{ status: string }>(
      tx,
      `select status from execution_contacts where id = ? and claimed_by = ? and status in ('in_progress', 'pending') for update`,
      [call.executionContactId, call.claimToken],
    );
    if (!row) return;
    const now = this.now();
    const retryAt = new Date(now.getTime() + retryMs);
    // A pending row was already taken back by lease recovery (its attempt with it): it only waits now.
    const wasLive = row.status === 'in_progress';
    await query(
      tx,
      `update execution_contacts set status = 'pending', claimed_by = null, lease_until = null, next_attempt_at = ?::timestamptz, last_outcome = ?,
              attempts = case when ? then greatest(attempts - 1, 0) else attempts end, updated_at = ?::timestamptz
        where id = ?`,
      [at(retryAt), NOT_PLACED, wasLive, at(now), call.executionContactId],
    );
    if (wasLive) {
      await query(
        tx,
        `update executions set contacts_in_progress = contacts_in_progress - 1, contacts_pending = contacts_pending + 1, updated_at = ?::timestamptz where id = ?`,
        [at(now), call.executionId],
      );
    }
  }

  /** A call the carrier never took or refused costs nothing: its credit goes back, in the ledger too. */
  private async refund(tx: EntityManager, call: TrackedCall): Promise<void> {
    const [balance] = await query<{ credit_balance: number }>(
      tx,
      `update organizations set credit_balance = credit_balance + 1 where id = ? returning ${CREDIT_BALANCE_SQL('organizations')} as credit_balance`,
      [call.organizationId],
    );
    if (!balance) return;
    await recordLedgerEntry(tx, {
      organizationId: call.organizationId,
      kind: CreditEntryKind.refund,
      amount: 1,
      balanceAfter: Number(balance.credit_balance),
      executionId: call.executionId,
    });
    if (call.executionId) {
      await query(tx, 'update executions set credits_spent = greatest(credits_spent - 1, 0), updated_at = ?::timestamptz where id = ?', [
        at(this.now()),
        call.executionId,
      ]);
    }
  }
}
