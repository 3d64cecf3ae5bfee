import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { CarrierError, type CarrierAccount, type CarrierAdapter, type CarrierCallState } from '../../telephony/carrier.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import type { CallStatus, ProgramCarrier } from '../../telephony/telephony.enums.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { query } from '../../../db/sql.js';

interface ExpiredCall {
  call_id: string;
  carrier: ProgramCarrier;
  carrier_connection_id: string | null;
  carrier_call_id: string | null;
  to_number: string;
  from_number: string | null;
  attempt: number;
  queued_at: Date | string;
  status: CallStatus;
}

export interface ReconcileOptions {
  tracker: CallTracker;
  carrier: (kind: ProgramCarrier) => CarrierAdapter | undefined;
  account: (kind: ProgramCarrier, connectionId: string | null) => Promise<CarrierAccount>;
  leaseClock: Date | null;
  logger: Logger;
  /** Calls asked about per tick. */
  batch?: number;
  /** The runner's lease: a single call asked about is held this long again. Default 60000. */
  leaseMs?: number;
}

/**
 * Contacts whose lease ran out while their call was live at the carrier (the runner that placed
 * it died, or the call's reports were lost): before anything is retried the carrier is asked how
 * the call stands. An ended call is recorded as if its report had arrived; a live one keeps its
 * claim; a call the carrier has no record of fails, and the contact goes back to the queue
 * without an attempt (its credit refunded). When the carrier cannot be asked, the claim is kept
 * and it is asked again next time, so a contact never has two live calls in one execution.
 */
export async function reconcileExpiredCalls(em: EntityManager, options: ReconcileOptions): Promise<number> {
  const rows = await query<ExpiredCall>(
    em,
    `select c.id as call_id, c.carrier, c.carrier_connection_id, c.carrier_call_id, c.to_number, c.from_number, c.attempt, c.queued_at, c.status
       from execution_contacts ec
       join calls c on c.execution_contact_id = ec.id and c.claim_token = ec.claimed_by
      where ec.status = 'in_progress' and ec.lease_until < ${LEASE_NOW} and c.status in ('queued', 'ringing', 'in_progress')
      order by ec.lease_until
      limit ?`,
    [leaseNow(options.leaseClock), options.batch ?? 50],
  );
  // Single calls (POST /api/calls) whose runner's lease ran out, asked about the same way; each ask
  // pushes the lease, so a long call is asked about once a lease, not on every tick.
  rows.push(
    ...(await query<ExpiredCall>(
      em,
      `update calls c set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
         from (select id from calls where execution_id is null and direction = 'outbound' and claim_token is not null
                 and status in ('queued', 'ringing', 'in_progress') and lease_until < ${LEASE_NOW}
                order by lease_until limit ? for no key update skip locked) expired
        where c.id = expired.id
        returning c.id as call_id, c.carrier, c.carrier_connection_id, c.carrier_call_id, c.to_number, c.from_number, c.attempt, c.queued_at, c.status`,
      [leaseNow(options.leaseClock), options.leaseMs ?? 60_000, leaseNow(options.leaseClock), options.batch ?? 50],
    )),
  );
  for (const row of rows) {
    const known = {
      callId: row.call_id,
      carrierCallId: row.carrier_call_id,
      to: row.to_number,
      from: row.from_number,
      attempt: row.attempt,
      queuedAt: new Date(row.queued_at),
    };
    let state: CarrierCallState | null;
    try {
      const adapter = options.carrier(row.carrier);
      if (!adapter) throw new CarrierError('unavailable', `No ${row.carrier} carrier is configured in this gateway`);
      const account = await options.account(row.carrier, row.carrier_connection_id);
      state = known.carrierCallId ? await adapter.fetchCall(account, { ...known, carrierCallId: known.carrierCallId }) : await adapter.findCall(account, known);
    } catch (error) {
      options.logger.warn({ err: error, callId: row.call_id }, 'could not ask the carrier how a call stands; its claim is kept and it is asked again');
      await options.tracker.keepAlive(row.call_id);
      continue;
    }
    if (state === null) {
      // Nothing is live at the carrier: the contact can be called again at once.
      await options.tracker.notPlaced(row.call_id, 'The carrier has no record of this call', false, 0);
    } else {
      await options.tracker.apply(row.call_id, state);
    }
  }
  return rows.length;
}
