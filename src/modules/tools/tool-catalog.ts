import type { EntityManager } from '@mikro-orm/postgresql';
import type { FieldError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { query } from '../../db/sql.js';
import type { McpServerTool } from './mcp-server.entity.js';
import type { AgentToolChoice } from './tool-session.types.js';
import { TOOL_LIMITS } from './tool-limits.js';

/**
 * What an agent may list as its tools, checked when it is saved: its HTTP tools are the
 * organization's, its MCP servers too, each name one its (ready) server lists and the gateway does
 * not refuse, and no two tools of the agent share a name.
 */
export class ToolCatalog {
  constructor(private readonly em: EntityManager) {}

  /** The problems of an agent's choice, each naming its field (none: it can be saved). */
  async choiceErrors(organizationId: string, choice: AgentToolChoice): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    const names = new Map<string, string>();
    const claim = (name: string, field: string) => {
      const first = names.get(name);
      if (first) errors.push({ field, message: `${name} is also the name of ${first}: an agent’s tools need names of their own` });
      else names.set(name, field);
    };
    const ids = choice.toolIds.filter(isUuid);
    const tools = ids.length
      ? await query<{ id: string; name: string }>(
          this.em,
          `select id, name from tools where organization_id = ? and id in (${ids.map(() => '?').join(', ')})`,
          [organizationId, ...ids],
        )
      : [];
    const byId = new Map(tools.map((tool) => [tool.id, tool.name]));
    const seenIds = new Set<string>();
    choice.toolIds.forEach((id, index) => {
      const name = byId.get(id);
      if (!name) errors.push({ field: `toolIds.${index}`, message: 'no tool of the organization has this id' });
      else if (seenIds.has(id)) errors.push({ field: `toolIds.${index}`, message: 'the tool is listed twice' });
      else claim(name, `toolIds.${index}`);
      seenIds.add(id);
    });
    const serverIds = [...new Set(choice.mcpTools.map((entry) => entry.serverId).filter(isUuid))];
    const servers = serverIds.length
      ? await query<{ id: string; status: string; tools: McpServerTool[] | string }>(
          this.em,
          `select id, status, tools from mcp_servers where organization_id = ? and id in (${serverIds.map(() => '?').join(', ')})`,
          [organizationId, ...serverIds],
        )
      : [];
    const serverById = new Map(
      servers.map((server) => [
        server.id,
        { status: server.status, tools: typeof server.tools === 'string' ? (JSON.parse(server.tools) as McpServerTool[]) : server.tools },
      ]),
    );
    choice.mcpTools.forEach((entry, index) => {
      const server = serverById.get(entry.serverId);
      if (!server) {
        errors.push({ field: `mcpTools.${index}.serverId`, message: 'no MCP server of the organization has this id' });
        return;
      }
      entry.names.forEach((name, at) => {
        const field = `mcpTools.${index}.names.${at}`;
        const listed = server.tools.find((tool) => tool.name === name);
        // A server not listed yet (or down) is taken at its word: its tools are offered once it lists them.
        if (server.status === 'ready' && !listed) errors.push({ field, message: `the MCP server does not list a tool named ${name}` });
        else if (listed?.refused) errors.push({ field, message: `${name} cannot be used: ${listed.refused}` });
        else claim(name, field);
      });
    });
    if (names.size > TOOL_LIMITS.toolsPerAgent)
      errors.push({
        field: 'toolIds',
        message: `an agent may call at most ${TOOL_LIMITS.toolsPerAgent} tools (HTTP and MCP together); it lists ${names.size}`,
      });
    return errors;
  }

  /** The names of the tools an agent lists (for the messages that name them). */
  async names(organizationId: string, choice: AgentToolChoice): Promise<string[]> {
    const ids = choice.toolIds.filter(isUuid);
    const tools = ids.length
      ? await query<{ name: string }>(this.em, `select name from tools where organization_id = ? and id in (${ids.map(() => '?').join(', ')}) order by name`, [
          organizationId,
          ...ids,
        ])
      : [];
    return [...tools.map((tool) => tool.name), ...choice.mcpTools.flatMap((entry) => entry.names)];
  }
}
