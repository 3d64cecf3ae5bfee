import type { EntityManager } from '@mikro-orm/postgresql';
import type { ProgramCarrier } from '../../telephony/telephony.enums.js';
import type { FlowEdge, FlowNode } from '../call-flow.types.js';
import type { CallingWindow, RetryPolicy } from '../program.types.js';
import type { ProgramRecording } from '../../recordings/recording-settings.js';
import { placeholders, query } from '../../../db/sql.js';

/** A running execution and the program settings the runner needs to advance it. */
export interface RunnableExecution {
  id: string;
  programId: string;
  organizationId: string;
  maxConcurrentCalls: number;
  callingWindow: CallingWindow | null;
  retryPolicy: RetryPolicy;
  agentId: string | null;
  flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null;
  /** What the simulated caller says (null: its default lines). */
  utterances: string[] | null;
  /** The program's recording setting (null: its calls are not recorded). */
  recording: ProgramRecording | null;
  /** Where the calls are placed, with which caller ID, through which connection at how many new calls per second. */
  carrier: ProgramCarrier;
  fromNumber: string | null;
  connectionId: string | null;
  callsPerSecond: number | null;
  /** When the execution is stopped by its schedule (no call is placed from then on). */
  scheduledStopAt: Date | null;
}

interface ExecutionRow {
  id: string;
  program_id: string;
  organization_id: string;
  max_concurrent_calls: number;
  calling_window: CallingWindow | null;
  retry_policy: RetryPolicy;
  agent_id: string | null;
  simulated_caller: { utterances: string[] } | null;
  recording: ProgramRecording | null;
  flow_nodes: FlowNode[] | null;
  flow_edges: FlowEdge[] | null;
  carrier: ProgramCarrier;
  from_number: string | null;
  connection_id: string | null;
  calls_per_second: number | null;
  scheduled_stop_at: Date | string | null;
}

const EXECUTION_SELECT = `select e.id, e.program_id, e.organization_id, e.scheduled_stop_at, p.max_concurrent_calls, p.calling_window, p.retry_policy, p.agent_id, p.simulated_caller, p.recording,
            f.nodes as flow_nodes, f.edges as flow_edges, p.carrier, pn.number as from_number,
            case when p.carrier <> 'simulator' then cc.id end as connection_id, cc.calls_per_second
       from executions e
       join programs p on p.id = e.program_id
       left join call_flows f on f.id = coalesce(e.flow_id, p.flow_id)
       left join phone_numbers pn on pn.id = p.from_number_id
       left join carrier_connections cc on cc.id = pn.carrier_connection_id and cc.carrier = p.carrier`;

function runnable(row: ExecutionRow): RunnableExecution {
  return {
    id: row.id,
    programId: row.program_id,
    organizationId: row.organization_id,
    maxConcurrentCalls: Math.max(1, row.max_concurrent_calls),
    callingWindow: row.calling_window,
    retryPolicy: row.retry_policy,
    agentId: row.agent_id,
    utterances: row.simulated_caller?.utterances ?? null,
    recording: row.recording?.enabled ? row.recording : null,
    flow: row.flow_nodes ? { nodes: row.flow_nodes, edges: row.flow_edges ?? [] } : null,
    carrier: row.carrier,
    fromNumber: row.from_number,
    connectionId: row.connection_id,
    callsPerSecond: row.calls_per_second === null ? null : Number(row.calls_per_second),
    scheduledStopAt: row.scheduled_stop_at === null ? null : new Date(row.scheduled_stop_at),
  };
}

/** One execution with its program's settings, whatever its status (the call tracker records late calls too). */
export async function loadExecution(em: EntityManager, executionId: string): Promise<RunnableExecution | null> {
  const [row] = await query<ExecutionRow>(em, `${EXECUTION_SELECT} where e.id = ?`, [executionId]);
  return row ? runnable(row) : null;
}

/** Several executions by id, with their program's settings, in one statement. */
export async function loadExecutions(em: EntityManager, executionIds: string[]): Promise<Map<string, RunnableExecution>> {
  if (executionIds.length === 0) return new Map();
  const rows = await query<ExecutionRow>(em, `${EXECUTION_SELECT} where e.id in (${placeholders(executionIds)})`, executionIds);
  return new Map(rows.map((row) => [row.id, runnable(row)]));
}

/** Running executions with a free call slot, with their program's settings (the flow the execution started with, else the program's). */
export async function listRunnable(em: EntityManager): Promise<RunnableExecution[]> {
  const rows = await query<ExecutionRow>(
    em,
    `${EXECUTION_SELECT}
      where e.status = 'running' and e.contacts_in_progress < greatest(p.max_concurrent_calls, 1)
      order by e.id`,
  );
  return rows.map(runnable);
}
