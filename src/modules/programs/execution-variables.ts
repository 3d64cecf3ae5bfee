import type { EntityManager } from '@mikro-orm/postgresql';
import type { FieldError } from '../../common/errors.js';
import { query } from '../../db/sql.js';
import type { AgentVariable } from '../agents/templates/agent-variable.types.js';
import { templateVariables } from '../agents/templates/call-context.js';

interface AgentTemplates {
  id: string;
  name: string;
  instructions: string;
  policy: string | null;
  first_message: string | null;
  variables: AgentVariable[] | string;
}

/**
 * The variables of an execution's agents (the program's agent, or every agent of its flow) that
 * some of its contacts would be called without: no value in the execution's `variables`, no
 * default, and no attribute of that name on the contact. One error per variable, naming the
 * agents that use it and how many contacts lack it; none when every call can fill every template.
 */
export async function missingExecutionVariables(
  em: EntityManager,
  organizationId: string,
  executionId: string,
  given: Record<string, string>,
): Promise<FieldError[]> {
  const agents = await query<AgentTemplates>(
    em,
    `select a.id, a.name, a.instructions, a.policy, a.first_message, a.variables
       from executions e join programs p on p.id = e.program_id
       left join call_flows f on f.id = coalesce(e.flow_id, p.flow_id)
       join agents a on a.organization_id = e.organization_id
        and (a.id = p.agent_id or a.id in (select (n->>'agentId')::uuid from jsonb_array_elements(coalesce(f.nodes, '[]'::jsonb)) n where n->>'agentId' ~* '^[0-9a-f-]{36}$'))
      where e.id = ? and e.organization_id = ?`,
    [executionId, organizationId],
  );
  const usedBy = new Map<string, string[]>();
  for (const row of agents) {
    const variables = typeof row.variables === 'string' ? (JSON.parse(row.variables) as AgentVariable[]) : row.variables;
    const agent = { instructions: row.instructions, policy: row.policy, firstMessage: row.first_message, variables };
    const defaults = new Set(variables.filter((variable) => variable.default !== null && variable.default !== undefined).map((variable) => variable.name));
    for (const name of templateVariables(agent)) {
      if (defaults.has(name) || given[name] !== undefined) continue;
      usedBy.set(name, [...(usedBy.get(name) ?? []), row.name]);
    }
  }
  const errors: FieldError[] = [];
  for (const [name, names] of usedBy) {
    const [row] = await query<{ lacking: number }>(
      em,
      `select count(*)::int as lacking from execution_contacts x join contacts c on c.id = x.contact_id
        where x.execution_id = ? and x.organization_id = ? and (c.attributes ->> ?) is null`,
      [executionId, organizationId, name],
    );
    const lacking = Number(row?.lacking ?? 0);
    if (lacking === 0) continue;
    errors.push({
      field: `variables.${name}`,
      message: `{{${name}}} (used by ${names.join(', ')}) has no value: it is not in the execution's variables, has no default, and ${lacking} contact${lacking === 1 ? ' has' : 's have'} no attribute "${name}"`,
    });
  }
  return errors;
}
