import { ToolChoicesDocument, type AgentFormFragment } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { QueryError } from '../../components/common';
import { Section } from '../../components/page';

/** The tools the agent may call: the organization's HTTP tools it lists (toolIds) and the MCP servers' tools it names (mcpTools). */
export function AgentTools({ agent }: { agent: AgentFormFragment }) {
  const choices = useQuery(ToolChoicesDocument, {}, { skip: agent.toolIds.length === 0 && agent.mcpTools.length === 0 });
  const tools = new Map(choices.data?.tools.data.map((tool) => [tool.id, tool]));
  const servers = new Map(choices.data?.mcpServers.data.map((server) => [server.id, server]));
  return (
    <Section title="Tools" id="agent-tools">
      {choices.error ? <QueryError error={choices.error} what="Tools" /> : null}
      {agent.toolIds.length === 0 && agent.mcpTools.length === 0 ? <p>Only the built-in tools: this agent lists no HTTP tool and no MCP server.</p> : null}
      {agent.toolIds.length > 0 ? (
        <>
          <h3>HTTP tools</h3>
          <ul className="tool-list" data-testid="agent-http-tools">
            {agent.toolIds.map((id) => {
              const tool = tools.get(id);
              return (
                <li key={id}>
                  <code>{tool?.name ?? id}</code>
                  {tool ? (
                    <>
                      {' '}
                      — {tool.method} <code>{tool.url}</code>
                      <br />
                      {tool.description}
                    </>
                  ) : null}
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
      {agent.mcpTools.length > 0 ? (
        <>
          <h3>MCP servers</h3>
          <ul className="tool-list" data-testid="agent-mcp-tools">
            {agent.mcpTools.map((entry) => {
              const server = servers.get(entry.serverId);
              return (
                <li key={entry.serverId}>
                  {server ? (
                    <>
                      {server.name} (<code>{server.url}</code>, {server.status})
                    </>
                  ) : (
                    <code>{entry.serverId}</code>
                  )}
                  : {entry.names.join(', ')}
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
    </Section>
  );
}
