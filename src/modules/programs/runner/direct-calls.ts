import type { EntityManager } from '@mikro-orm/postgresql';
import type { FlowEdge, FlowNode } from '../call-flow.types.js';
import type { ProgramCarrier } from '../../telephony/telephony.enums.js';
import { LEASE_NOW, leaseNow } from './leases.js';
import { placeholders, query } from '../../../db/sql.js';
import type { RunnableExecution } from './runnable-execution.js';

// Single calls (POST /api/calls): call records without an execution, queued and paid when the
// request was answered. A runner takes the oldest ones for itself and places them as it places a
// campaign's; their progress, events and refunds are any call's (CallTracker).

/** How many queued single calls one pass takes. */
export const DIRECT_BATCH = 50;

/** What placing a call reads of its execution: for a single call, its own settings. */
export type PlacementSettings = Pick<RunnableExecution, 'carrier' | 'connectionId' | 'fromNumber' | 'agentId' | 'flow' | 'utterances' | 'recording'>;

/** A call a runner holds to place: a campaign's claimed row, or a single call. */
export interface Placement {
  callId: string;
  token: string;
  phone: string;
  timeZone: string | null;
  attempt: number;
  /** null for a single call. */
  executionContactId: string | null;
  execution: PlacementSettings;
}

interface DirectRow {
  id: string;
  to_number: string;
  from_number: string | null;
  carrier: ProgramCarrier;
  carrier_connection_id: string | null;
  agent_id: string | null;
  attempt: number;
  time_zone: string | null;
  flow_nodes: FlowNode[] | null;
  flow_edges: FlowEdge[] | null;
}

/**
 * Takes up to `limit` queued single calls on the carriers this runner can place, oldest first, for
 * `token`: a row another runner is taking is skipped (SKIP LOCKED), and once taken it has a claim
 * token, so it leaves the queue's index and no runner takes it again. The lease is how long this
 * runner holds it before reconcile.ts asks the carrier how it stands.
 */
export async function claimDirectCalls(
  em: EntityManager,
  options: { token: string; carriers: ProgramCarrier[]; leaseMs: number; leaseClock: Date | null; limit?: number },
): Promise<Placement[]> {
  if (options.carriers.length === 0) return [];
  const rows = await query<DirectRow>(
    em,
    `with taken as (
       update calls c set claim_token = ?, lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
         from (select id from calls
                where execution_id is null and direction = 'outbound' and status = 'queued' and claim_token is null and carrier in (${placeholders(options.carriers)})
                order by queued_at, id limit ? for no key update skip locked) picked
        where c.id = picked.id
        returning c.*)
     select t.id, t.to_number, t.from_number, t.carrier, t.carrier_connection_id, t.agent_id, t.attempt, ct.time_zone, f.nodes as flow_nodes, f.edges as flow_edges
       from taken t
       left join contacts ct on ct.id = t.contact_id
       left join call_flows f on f.id = (t.voice_state ->> 'flowId')::uuid and f.organization_id = t.organization_id
      order by t.queued_at, t.id`,
    [options.token, leaseNow(options.leaseClock), options.leaseMs, ...options.carriers, options.limit ?? DIRECT_BATCH],
  );
  return rows.map((row) => ({
    callId: row.id,
    token: options.token,
    phone: row.to_number,
    timeZone: row.time_zone,
    attempt: row.attempt,
    executionContactId: null,
    execution: {
      carrier: row.carrier,
      connectionId: row.carrier_connection_id,
      fromNumber: row.from_number,
      agentId: row.agent_id,
      flow: row.flow_nodes ? { nodes: row.flow_nodes, edges: row.flow_edges ?? [] } : null,
      utterances: null,
      recording: null,
    },
  }));
}

/** Pushes the leases of the single calls this runner holds (by claim token), as renewLeases does a campaign's rows. */
export async function renewDirectLeases(em: EntityManager, tokens: string[], leaseMs: number, leaseClock: Date | null): Promise<void> {
  if (tokens.length === 0) return;
  await query(
    em,
    `update calls set lease_until = ${LEASE_NOW} + ? * interval '1 millisecond'
      where execution_id is null and claim_token in (${placeholders(tokens)}) and status in ('queued', 'ringing', 'in_progress')`,
    [leaseNow(leaseClock), leaseMs, ...tokens],
  );
}
