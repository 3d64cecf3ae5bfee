import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from '../../../db/sql.js';
import type { AgentVariable } from './agent-variable.types.js';
import { localTime, renderedLine, resolveVariables, type CallContext } from './call-context.js';
import { DEFAULT_SCREENING_RESPONSE } from './screening.js';

interface CallContextRow {
  id: string;
  direction: 'inbound' | 'outbound';
  from_number: string | null;
  to_number: string | null;
  execution_id: string | null;
  answered_at: Date | string | null;
  contact_id: string | null;
  contact_name: string | null;
  contact_phone: string | null;
  contact_time_zone: string | null;
  contact_attributes: Record<string, unknown> | string | null;
  program_id: string | null;
  program_name: string | null;
  execution_variables: Record<string, string> | string | null;
  /** A single call's own values (POST /api/calls `variables`). */
  call_variables: Record<string, string> | string | null;
  organization_name: string;
  /** The program's screening response (null: the default). */
  screening_response: string | null;
}

/** What a call's templates need, read in one statement: the call, its contact, its program and execution, the organization. */
const CALL_CONTEXT_SQL = `
  select c.id, c.direction, c.from_number, c.to_number, c.execution_id, c.answered_at,
         ct.id as contact_id, ct.name as contact_name, ct.phone as contact_phone, ct.time_zone as contact_time_zone, ct.attributes as contact_attributes,
         p.id as program_id, p.name as program_name, p.screening_response, e.variables as execution_variables, c.variables as call_variables, o.name as organization_name
    from calls c
    join organizations o on o.id = c.organization_id
    left join lateral (
      select x.id, x.name, x.phone, x.time_zone, x.attributes from contacts x
       where x.organization_id = c.organization_id
         and (x.id = c.contact_id or (c.contact_id is null and c.direction = 'inbound' and x.phone = c.from_number))
       limit 1
    ) ct on true
    left join executions e on e.id = c.execution_id and e.organization_id = c.organization_id
    left join programs p on p.id = coalesce(e.program_id, c.program_id) and p.organization_id = c.organization_id
   where c.id = ? and c.organization_id = ?`;

function json<T>(value: T | string | null): T | null {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/** A call as its agent's templates see it, before a conversation is named. */
export interface CallSource {
  row: CallContextRow;
}

/**
 * Reads what a call's agent knows of it: the call (direction, numbers), its contact (an inbound
 * caller whose number is a contact's is that contact), the program and execution, the organization.
 */
export async function readCallSource(em: EntityManager, organizationId: string, callId: string): Promise<CallSource | null> {
  const [row] = await query<CallContextRow>(em, CALL_CONTEXT_SQL, [callId, organizationId]);
  return row ? { row } : null;
}

/** When the call was answered (null: not yet, or unknown). */
export function answeredAt(source: CallSource): Date | null {
  const value = source.row.answered_at;
  return value ? new Date(value) : null;
}

/**
 * The call's context for `agent`: its variables from the single call's own values (POST /api/calls),
 * the contact's attributes, the execution's values and the agent's defaults. Variables with none of them stay
 * out (rendered empty): the execution was refused at start when it could tell.
 */
export function callContext(
  source: CallSource,
  agent: { id: string; name: string; instructions: string; policy: string | null; firstMessage: string | null; variables: AgentVariable[] },
  conversationId: string | null,
  at = new Date(),
): CallContext {
  const row = source.row;
  const attributes = json<Record<string, unknown>>(row.contact_attributes) ?? {};
  const sources = { given: json<Record<string, string>>(row.call_variables), attributes, execution: json<Record<string, string>>(row.execution_variables) };
  const { values } = resolveVariables(agent, sources);
  const contactPhone = row.contact_phone ?? (row.direction === 'inbound' ? row.from_number : row.to_number);
  const context: CallContext = {
    agentId: agent.id,
    conversationId,
    call: { id: row.id, direction: row.direction, from: row.from_number, to: row.to_number },
    contact: { id: row.contact_id, name: row.contact_name, phone: contactPhone, timeZone: row.contact_time_zone, attributes },
    program: row.program_id ? { id: row.program_id, name: row.program_name ?? '' } : null,
    executionId: row.execution_id,
    organization: { name: row.organization_name },
    agent: { name: agent.name },
    variables: values,
    now: at.toISOString(),
    localTime: localTime(at, row.contact_time_zone),
    screening: null,
  };
  if (row.direction === 'outbound') context.screening = screeningLine(row.screening_response ?? DEFAULT_SCREENING_RESPONSE, context, sources);
  return context;
}

/** The screening response as the agent says it: its own variables (say `reason`) from the call's sources, not the agent's defaults. */
function screeningLine(template: string, context: CallContext, sources: Parameters<typeof resolveVariables>[1]): string {
  const { values } = resolveVariables({ instructions: template, policy: null, firstMessage: null, variables: [] }, sources);
  return renderedLine(template, { ...context, variables: { ...values, ...context.variables } });
}
