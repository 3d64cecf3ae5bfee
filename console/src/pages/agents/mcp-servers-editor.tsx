import { useState } from 'react';
import {
  CreateMcpServerDocument,
  DeleteMcpServerDocument,
  RefreshMcpServerDocument,
  UpdateMcpServerDocument,
  type AgentFormFragment,
  type McpServerRowFragment,
} from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { Badge } from '../../components/common';
import { FormError } from '../../components/forms';
import { McpServerForm, type McpServerInput } from './mcp-server-form';

interface Props {
  agent: AgentFormFragment;
  servers: McpServerRowFragment[];
  saving: boolean;
  /** Saves the agent's mcpTools (every server's names; a server with none left is dropped). */
  onSave: (mcpTools: { serverId: string; names: string[] }[], what: string) => void;
  /** The organization's servers changed: read them again. */
  onChanged: () => void;
}

/** The organization's MCP servers: each listed tool ticked when the agent may call it; add, change, refresh and delete a server. */
export function McpServersEditor({ agent, servers, saving, onSave, onChanged }: Props) {
  const create = useMutation(CreateMcpServerDocument);
  const update = useMutation(UpdateMcpServerDocument);
  const refresh = useMutation(RefreshMcpServerDocument);
  const remove = useMutation(DeleteMcpServerDocument);
  const [editing, setEditing] = useState<string | 'new' | null>(null);

  const chosen = (serverId: string) => agent.mcpTools.find((entry) => entry.serverId === serverId)?.names ?? [];
  const toggle = (serverId: string, name: string, on: boolean) => {
    const names = on ? [...chosen(serverId), name] : chosen(serverId).filter((listed) => listed !== name);
    const others = agent.mcpTools.filter((entry) => entry.serverId !== serverId).map(({ serverId: id, names: listed }) => ({ serverId: id, names: listed }));
    onSave(names.length > 0 ? [...others, { serverId, names }] : others, on ? `The agent may call ${name}` : `The agent no longer calls ${name}`);
  };
  const submit = async (input: McpServerInput) => {
    const done = editing === 'new' ? await create.run({ input }) : editing ? await update.run({ id: editing, input }) : null;
    if (!done) return;
    setEditing(null);
    onChanged();
  };
  const openForm = (which: string | 'new') => {
    create.reset();
    update.reset();
    setEditing(which);
  };

  return (
    <>
      <h3>MCP servers</h3>
      <FormError error={refresh.error ?? remove.error} />
      {servers.length === 0 ? <p>The organization has no MCP server yet.</p> : null}
      <ul className="tool-list" data-testid="organization-mcp-servers" aria-label="MCP servers">
        {servers.map((server) =>
          editing === server.id ? (
            <li key={server.id}>
              <McpServerForm
                server={server}
                error={update.error}
                pending={update.pending}
                onSubmit={(input) => void submit(input)}
                onCancel={() => setEditing(null)}
              />
            </li>
          ) : (
            <li key={server.id} data-server={server.name}>
              <strong>{server.name}</strong> <code>{server.url}</code> <Badge value={server.status} />
              {server.authHeaderName ? <span className="meta"> · sends {server.authHeaderName}</span> : null}
              {server.lastError ? <p className="hint">{server.lastError}</p> : null}
              {/* The names the agent lists that the server no longer does stay, so unticking them is possible. */}
              {[...new Set([...server.tools.map((tool) => tool.name), ...chosen(server.id)])].map((name) => {
                const listed = server.tools.find((tool) => tool.name === name);
                const id = `mcp-${server.id}-${name}`;
                return (
                  <div className="field field-checkbox" key={name}>
                    <input
                      id={id}
                      type="checkbox"
                      checked={chosen(server.id).includes(name)}
                      disabled={saving || (Boolean(listed?.refused) && !chosen(server.id).includes(name))}
                      onChange={(event) => toggle(server.id, name, event.target.checked)}
                    />
                    <label htmlFor={id}>
                      <span className="visually-hidden">The agent may call </span>
                      <code>{name}</code>
                      {listed?.description ? ` — ${listed.description}` : ''}
                      {listed?.refused ? ` (refused: ${listed.refused})` : ''}
                      {listed ? '' : ' (no longer listed)'}
                    </label>
                  </div>
                );
              })}
              <div className="row-actions">
                <button type="button" className="small" onClick={() => openForm(server.id)}>
                  Edit <span className="visually-hidden">{server.name}</span>
                </button>
                <button type="button" className="small" onClick={() => void refresh.run({ id: server.id }).then((done) => done && onChanged())}>
                  List the tools again <span className="visually-hidden">of {server.name}</span>
                </button>
                <button type="button" className="small danger" onClick={() => void remove.run({ id: server.id }).then((done) => done && onChanged())}>
                  Delete <span className="visually-hidden">{server.name}</span>
                </button>
              </div>
            </li>
          ),
        )}
      </ul>
      {editing === 'new' ? (
        <McpServerForm server={null} error={create.error} pending={create.pending} onSubmit={(input) => void submit(input)} onCancel={() => setEditing(null)} />
      ) : (
        <button type="button" onClick={() => openForm('new')}>
          Add an MCP server
        </button>
      )}
    </>
  );
}
