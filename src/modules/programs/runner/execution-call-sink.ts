import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { CallEffects, CallSink, TrackedCall } from '../../telephony/call-tracker.js';
import { CreditEntryKind } from '../../organizations/credit-ledger.entity.js';
import { recordLedgerEntry } from '../../organizations/credit.service.js';
import type { ExecutionEvents, RecordTransition } from '../execution-events.js';
import { recordCallIn } from './call-recorder.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { at, query } from './sql.js';
import { loadExecution } from './work-queue.js';

export interface ExecutionCallSinkOptions {
  events: ExecutionEvents;
  logger: Logger;
  /** How long a live call's claim is held from each report that it is live. */
  leaseMs: number;
  /** How long a contact whose call the carrier never took waits before it is tried again. */
  retryMs: number;
  /** The runner's injected clock (tests); leases then run on it rather than the database's. */
  clock?: () => Date;
}

/**
 * What a call's progress does to its execution: the call tracker (telephony) calls these inside
 * the transaction that moves the call, so a call and its contact's result commit together.
 */
export class ExecutionCallSink implements CallSink {
  constructor(private readonly options: ExecutionCallSinkOptions) {}

  transaction<T>(em: EntityManager, work: (tx: EntityManager, effects: CallEffects) => Promise<T>): Promise<T> {
    return this.options.events.transaction(em, (tx, record) => work(tx, this.effects(tx, record)));
  }

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  private effects(tx: EntityManager, record: RecordTransition): CallEffects {
    const { leaseMs, retryMs, logger } = this.options;
    const leaseClock = this.options.clock ? this.now() : null;
    return {
      live: async (call) => {
        if (!call.executionContactId || !call.claimToken) return;
        await query(
          tx,
          `update execution_contacts set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
            where id = ? and claimed_by = ? and status = 'in_progress'`,
          [leaseNow(leaseClock), leaseMs, call.executionContactId, call.claimToken],
        );
      },
      ended: async (call, outcome, durationSeconds) => {
        if (!call.executionContactId || !call.claimToken || !call.executionId) return;
        const execution = await loadExecution(tx, call.executionId);
        if (!execution) return;
        const claim = { executionContactId: call.executionContactId, token: call.claimToken, attempt: call.attempt, execution };
        const result = await recordCallIn(tx, record, claim, { outcome, reachedNodeIds: call.reachedNodeIds, durationSeconds }, this.now());
        if (result === 'dropped') logger.warn({ callId: call.id, executionContactId: call.executionContactId }, 'the contact was claimed again meanwhile; this call is kept but not counted');
      },
      released: async (call, retryAfterMs) => this.release(tx, call, retryAfterMs ?? retryMs),
      refund: async (call) => this.refund(tx, call),
    };
  }

  /** The carrier never took the call: the row goes back to pending, its attempt not counted, tried again in `retryMs`. */
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
      `update execution_contacts set status = 'pending', claimed_by = null, lease_until = null, next_attempt_at = ?::timestamptz,
              attempts = case when ? then greatest(attempts - 1, 0) else attempts end, updated_at = ?::timestamptz
        where id = ?`,
      [at(retryAt), wasLive, at(now), call.executionContactId],
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
      'update organizations set credit_balance = credit_balance + 1 where id = ? returning credit_balance',
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
