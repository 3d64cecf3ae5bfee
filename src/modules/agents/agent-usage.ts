import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from '../../db/sql.js';

// Read in SQL over the programs' and numbers' tables, so that the agents module does not import the
// modules that import it (programs, telephony).

/** What would call an agent: active programs (by their agent or their flow's nodes) and numbers that route inbound calls to it. */
export interface AgentUsers {
  programs: { id: string; name: string }[];
  numbers: { id: string; number: string }[];
}

/** Every active program of the organization and every number whose inbound calls speak through the agent, by name. */
export async function agentUsers(em: EntityManager, organizationId: string, agentId: string): Promise<AgentUsers> {
  const spokenBy = JSON.stringify([{ agentId }]);
  const programs = await query<{ id: string; name: string }>(
    em,
    `select p.id, p.name from programs p left join call_flows f on f.id = p.flow_id
      where p.organization_id = ? and p.status = 'active' and (p.agent_id = ? or f.nodes @> ?::jsonb)
      order by p.name, p.id`,
    [organizationId, agentId, spokenBy],
  );
  const numbers = await query<{ id: string; number: string }>(
    em,
    `select n.id, n.number from phone_numbers n left join call_flows f on f.id = n.inbound_flow_id
      where n.organization_id = ? and (n.inbound_agent_id = ? or f.nodes @> ?::jsonb)
      order by n.number, n.id`,
    [organizationId, agentId, spokenBy],
  );
  return { programs, numbers };
}

/** "the active programs "A" (id) and "B" (id), and the number +1… (its inbound calls)", at most five of each named. */
export function describeUsers(users: AgentUsers): string {
  const named = <T>(items: T[], show: (item: T) => string) =>
    items.length > 5 ? `${items.slice(0, 5).map(show).join(', ')} and ${items.length - 5} more` : items.map(show).join(', ');
  const parts: string[] = [];
  if (users.programs.length > 0) {
    parts.push(`the active program${users.programs.length === 1 ? '' : 's'} ${named(users.programs, (program) => `"${program.name}" (${program.id})`)}`);
  }
  if (users.numbers.length > 0) {
    parts.push(`the number${users.numbers.length === 1 ? '' : 's'} ${named(users.numbers, (number) => `${number.number} (${number.id})`)} (inbound calls)`);
  }
  return parts.join(', and ');
}
