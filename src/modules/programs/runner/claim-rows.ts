import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EventWriter } from '../../events/event-writer.js';
import { Call } from '../../telephony/call.entity.js';
import { callJson } from '../../telephony/call.types.js';
import { at, query } from '../../../db/sql.js';
import type { RunnableExecution } from './runnable-execution.js';

// The statements a claim writes its rows with (work-queue.ts): the suppressed numbers' call records,
// the claimed rows' call records, and the carrier connection's pacing.

/** A due pending row a claim picked. */
export interface CandidateRow {
  id: string;
  contact_id: string | null;
  phone: string;
  time_zone: string | null;
  attempts: number;
  /**
   * Why the row fails without a call: its number is on the do-not-call list (checked by number, so
   * a contact re-imported under another id is caught too), or the contact opted out or was deleted
   * since the start.
   */
  gone: 'do_not_call' | 'opted_out' | 'contact_deleted' | null;
}

/**
 * Contacts whose number is on the do-not-call list: each gets a call record that was never placed
 * (status canceled, outcome do_not_call, no credit, no carrier, no connection, so no pacing slot)
 * and its call.ended event, in the claim's transaction. So the calls list, the calls CSV (one row
 * per contact, with its last call's outcome) and the event stream all say do_not_call, as the
 * execution's contactsDoNotCall counter does.
 */
export async function suppressCalls(tx: EntityManager, execution: RunnableExecution, rows: CandidateRow[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map(() => randomUUID());
  await query(
    tx,
    `insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, agent_id, execution_contact_id,
                        direction, from_number, to_number, status, outcome, attempt, carrier, queued_at, ended_at, reached_node_ids, error_text, credits_charged)
     values ${rows.map(() => `(?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?, ?, 'outbound', ?, ?, 'canceled', 'do_not_call', ?, ?, ?::timestamptz, ?::timestamptz, '[]'::jsonb, ?, 0)`).join(', ')}`,
    rows.flatMap((row, index) => [
      ids[index],
      at(now),
      at(now),
      execution.organizationId,
      execution.id,
      execution.programId,
      row.contact_id,
      execution.agentId,
      row.id,
      execution.fromNumber,
      row.phone,
      row.attempts + 1,
      execution.carrier,
      at(now),
      at(now),
      'Not placed: the number is on the do-not-call list',
    ]),
  );
  const calls = await tx.find(Call, { id: { $in: ids } });
  await EventWriter.write(tx, ...calls.map((call) => ({ organizationId: execution.organizationId, type: 'call.ended' as const, payload: callJson(call) })));
}

/** The carrier's clock for pacing: the runner's injected one in tests, else the database's, read now. */
const PACING_NOW = 'coalesce(?::timestamptz, clock_timestamp())';

/** How many new calls a connection may start now, and when the next may start once those are used. */
export interface Pacing {
  allowance: number;
  nextAt: Date;
}

/**
 * How many new calls the connection may start now: its calls per second less the calls queued
 * on it in the last second (the next may start a second after the oldest of those). The connection's
 * row is locked for the rest of the claim's transaction, so runners in every replica take turns and
 * together never exceed the rate.
 */
export async function pacingAllowance(tx: EntityManager, connectionId: string, callsPerSecond: number, clockTime: Date | null): Promise<Pacing> {
  await query(tx, 'select id from carrier_connections where id = ? for update', [connectionId]);
  const [recent] = await query<{ count: string | number; next_at: Date | string }>(
    tx,
    `select count(*) as count, coalesce(min(queued_at), ${PACING_NOW}) + interval '1 second' as next_at
       from calls where carrier_connection_id = ? and queued_at > ${PACING_NOW} - interval '1 second'`,
    [clockTime && at(clockTime), connectionId, clockTime && at(clockTime)],
  );
  return { allowance: callsPerSecond - Number(recent?.count ?? 0), nextAt: new Date(recent!.next_at) };
}

/** One call record per claimed row, queued, paid with one credit. */
export async function openCalls(
  tx: EntityManager,
  execution: RunnableExecution,
  rows: CandidateRow[],
  token: string,
  clockTime: Date | null,
  now: Date,
  /** A data-modifying statement run with the insert, as its CTE (the claimed rows' update). */
  alongside: { sql: string; params: unknown[] },
): Promise<string[]> {
  const ids = rows.map(() => randomUUID());
  if (rows.length === 0) return ids;
  const values = rows.map(() => `(?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?, ?, ?, 'outbound', ?, ?, 'queued', ?, ?, ?, ${PACING_NOW}, '[]'::jsonb, 1)`);
  const params = rows.flatMap((row, index) => [
    ids[index],
    at(now),
    at(now),
    execution.organizationId,
    execution.id,
    execution.programId,
    row.contact_id,
    execution.agentId,
    row.id,
    token,
    execution.fromNumber,
    row.phone,
    row.attempts + 1,
    execution.carrier,
    execution.connectionId,
    clockTime && at(clockTime),
  ]);
  await query(
    tx,
    `with alongside as (${alongside.sql})
     insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, agent_id, execution_contact_id, claim_token,
                        direction, from_number, to_number, status, attempt, carrier, carrier_connection_id, queued_at, reached_node_ids, credits_charged)
     values ${values.join(', ')}`,
    [...alongside.params, ...params],
  );
  return ids;
}

/** How many times each value occurs. */
export function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
