import { useState } from 'react';
import {
  CreateToolDocument,
  DeleteToolDocument,
  OrganizationToolsDocument,
  RotateToolSecretDocument,
  UpdateAgentDocument,
  UpdateToolDocument,
  type AgentFormFragment,
} from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { Loading, QueryError, SecretOnce } from '../../components/common';
import { FormError } from '../../components/forms';
import { Section } from '../../components/page';
import { McpServersEditor } from './mcp-servers-editor';
import { ToolForm, type ToolInput } from './tool-form';

interface Props {
  agent: AgentFormFragment;
  onAgent: (agent: AgentFormFragment) => void;
}

/**
 * The agent's tools for those who may change them: the organization's HTTP tools, each ticked when the
 * agent may call it, added, changed (a new signing secret shown once) and deleted; then its MCP servers.
 * Each tick saves the agent's toolIds or mcpTools at once (updateAgent).
 */
export function AgentToolsEditor({ agent, onAgent }: Props) {
  const organization = useQuery(OrganizationToolsDocument, {});
  const setTools = useMutation(UpdateAgentDocument);
  const create = useMutation(CreateToolDocument);
  const update = useMutation(UpdateToolDocument);
  const rotate = useMutation(RotateToolSecretDocument);
  const remove = useMutation(DeleteToolDocument);
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const saveAgent = async (input: { toolIds?: string[]; mcpTools?: { serverId: string; names: string[] }[] }, what: string) => {
    setSaved(null);
    const done = await setTools.run({ id: agent.id, input });
    if (done) {
      onAgent(done.updateAgent);
      setSaved(`${what} (version ${done.updateAgent.version}).`);
    }
  };
  const toggle = (id: string, name: string, on: boolean) =>
    void saveAgent(
      { toolIds: on ? [...agent.toolIds, id] : agent.toolIds.filter((listed) => listed !== id) },
      on ? `The agent may call ${name}` : `The agent no longer calls ${name}`,
    );

  const submit = async (input: ToolInput) => {
    if (editing === 'new') {
      const done = await create.run({ input });
      if (!done) return;
      setSecret({ name: done.createTool.name, secret: done.createTool.secret });
      setEditing(null);
      organization.refetch();
      await saveAgent({ toolIds: [...agent.toolIds, done.createTool.id] }, `The agent may call ${done.createTool.name}`);
    } else if (editing) {
      const done = await update.run({ id: editing, input });
      if (!done) return;
      setEditing(null);
      organization.refetch();
    }
  };
  const newSecret = async (id: string) => {
    const done = await rotate.run({ id });
    if (done) setSecret({ name: done.rotateToolSecret.name, secret: done.rotateToolSecret.secret });
  };
  const deleteTool = async (id: string) => {
    if (await remove.run({ id })) organization.refetch();
  };
  const openForm = (which: string | 'new') => {
    create.reset();
    update.reset();
    setEditing(which);
  };

  const tools = organization.data?.tools.data ?? [];
  return (
    <Section title="Tools" id="agent-tools">
      {organization.error ? <QueryError error={organization.error} what="Tools" /> : null}
      <FormError error={setTools.error ?? rotate.error ?? remove.error} />
      {saved ? (
        <p className="saved" role="status" data-testid="tools-saved">
          {saved}
        </p>
      ) : null}
      {secret ? <SecretOnce label={`The signing secret of ${secret.name}:`} secret={secret.secret} onDone={() => setSecret(null)} /> : null}
      <h3>HTTP tools</h3>
      {organization.loading && !organization.data ? <Loading what="the tools" /> : null}
      {organization.data && tools.length === 0 ? <p>The organization has no HTTP tool yet.</p> : null}
      <ul className="tool-list" data-testid="organization-http-tools" aria-label="HTTP tools">
        {tools.map((tool) =>
          editing === tool.id ? (
            <li key={tool.id}>
              <ToolForm tool={tool} error={update.error} pending={update.pending} onSubmit={(input) => void submit(input)} onCancel={() => setEditing(null)} />
            </li>
          ) : (
            <li key={tool.id} data-tool={tool.name}>
              <div className="field field-checkbox">
                <input
                  id={`tool-${tool.id}`}
                  type="checkbox"
                  checked={agent.toolIds.includes(tool.id)}
                  disabled={setTools.pending}
                  onChange={(event) => toggle(tool.id, tool.name, event.target.checked)}
                />
                <label htmlFor={`tool-${tool.id}`}>
                  <span className="visually-hidden">The agent may call </span>
                  <code>{tool.name}</code>
                </label>
              </div>
              {tool.method} <code>{tool.url}</code>
              <br />
              {tool.description}
              <span className="meta"> · secret …{tool.secretHint}</span>
              <div className="row-actions">
                <button type="button" className="small" onClick={() => openForm(tool.id)}>
                  Edit <span className="visually-hidden">{tool.name}</span>
                </button>
                <button type="button" className="small" onClick={() => void newSecret(tool.id)} disabled={rotate.pending}>
                  New secret <span className="visually-hidden">for {tool.name}</span>
                </button>
                <button type="button" className="small danger" onClick={() => void deleteTool(tool.id)} disabled={remove.pending}>
                  Delete <span className="visually-hidden">{tool.name}</span>
                </button>
              </div>
            </li>
          ),
        )}
      </ul>
      {editing === 'new' ? (
        <ToolForm tool={null} error={create.error} pending={create.pending} onSubmit={(input) => void submit(input)} onCancel={() => setEditing(null)} />
      ) : (
        <button type="button" onClick={() => openForm('new')}>
          Add an HTTP tool
        </button>
      )}
      <McpServersEditor
        agent={agent}
        servers={organization.data?.mcpServers.data ?? []}
        saving={setTools.pending}
        onSave={(mcpTools, what) => void saveAgent({ mcpTools }, what)}
        onChanged={organization.refetch}
      />
    </Section>
  );
}
