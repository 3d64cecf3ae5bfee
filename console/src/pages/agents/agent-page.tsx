import { useEffect, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import {
  ActivateAgentDocument,
  AgentDocument,
  ArchiveAgentDocument,
  CreateAgentDocument,
  KnowledgeBaseChoicesDocument,
  UpdateAgentDocument,
  type AgentFormFragment,
} from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, QueryError } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { AGENT_FIELDS, draftOf, NEW_AGENT, toInput, type AgentDraft } from './agent-draft';
import { AgentFields } from './agent-fields';
import { AgentSummary } from './agent-summary';
import { AgentTools } from './agent-tools';
import { AgentToolsEditor } from './agent-tools-editor';
import { TalkButton } from './talk-button';
import { TestChat } from './test-chat';

/** An agent: its settings (a form for those who may change agents, a read-only summary for the others), its state, and a test chat. */
export function AgentPage({ id }: { id: string | null }) {
  const agent = useQuery(AgentDocument, { id: id ?? '' }, { skip: id === null });
  if (id === null) return <AgentEditor agent={null} />;
  if (agent.error && !agent.data) {
    return (
      <Page title="Agent">
        <QueryError error={agent.error} what="Agent" />
      </Page>
    );
  }
  if (!agent.data) return <Loading what="the agent" />;
  return <AgentEditor agent={agent.data.agent} />;
}

function AgentEditor({ agent: loaded }: { agent: AgentFormFragment | null }) {
  const { can } = useSession();
  const [, navigate] = useLocation();
  const [agent, setAgent] = useState(loaded);
  const [draft, setDraft] = useState<AgentDraft>(loaded ? draftOf(loaded) : NEW_AGENT);
  const [saved, setSaved] = useState<string | null>(null);
  const mayManage = can('agents.manage');
  const knowledgeBases = useQuery(KnowledgeBaseChoicesDocument, {}, { skip: !mayManage });
  const create = useMutation(CreateAgentDocument);
  const update = useMutation(UpdateAgentDocument);
  const activate = useMutation(ActivateAgentDocument);
  const archive = useMutation(ArchiveAgentDocument);
  const save = agent ? update : create;

  useEffect(() => setSaved(null), [draft]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = toInput(draft, agent, mayManage);
    if (agent) {
      const result = await update.run({ id: agent.id, input });
      if (result) {
        setAgent(result.updateAgent);
        setDraft(draftOf(result.updateAgent));
        setSaved(`Saved: version ${result.updateAgent.version}.`);
      }
    } else {
      const result = await create.run({ input });
      if (result) navigate(`/agents/${result.createAgent.id}`);
    }
  };

  const move = async (action: typeof activate | typeof archive) => {
    if (!agent) return;
    const result = await action.run({ id: agent.id });
    if (!result) return;
    const next = 'activateAgent' in result ? result.activateAgent : result.deleteAgent;
    setAgent(next);
  };

  const title = agent ? agent.name : 'New agent';
  return (
    <Page title={title}>
      {agent ? (
        <p className="meta">
          <Badge value={agent.status} /> Version {agent.version} · updated {formatDate(agent.updatedAt)}
        </p>
      ) : null}
      {agent && mayManage ? (
        <div className="actions" role="group" aria-label="Agent state">
          {agent.status === 'draft' ? (
            <button type="button" onClick={() => void move(activate)} disabled={activate.pending}>
              Activate
            </button>
          ) : null}
          {agent.status !== 'archived' ? (
            <button type="button" className="danger" onClick={() => void move(archive)} disabled={archive.pending}>
              Archive
            </button>
          ) : null}
        </div>
      ) : null}
      <FormError error={activate.error ?? archive.error} />
      {agent && agent.status !== 'archived' ? <TalkButton agentId={agent.id} /> : null}
      <div className={agent ? 'two-columns' : undefined}>
        <Section title="Settings">
          {mayManage && agent?.status !== 'archived' ? (
            <form onSubmit={(event) => void submit(event)} noValidate aria-label="Agent settings">
              <AgentFields
                draft={draft}
                onChange={setDraft}
                error={save.error}
                hasPolicy={agent?.hasPolicy ?? false}
                knowledgeBases={knowledgeBases.data?.knowledgeBases.data ?? []}
              />
              <FormError error={save.error} shown={AGENT_FIELDS} />
              {saved ? (
                <p className="saved" role="status">
                  {saved}
                </p>
              ) : null}
              <button type="submit" className="primary" disabled={save.pending}>
                {agent ? 'Save' : 'Create agent'}
              </button>
            </form>
          ) : agent ? (
            <AgentSummary agent={agent} />
          ) : (
            <p>Only an owner or an admin may create agents.</p>
          )}
        </Section>
        {agent ? <TestChat agentId={agent.id} /> : null}
      </div>
      {agent && mayManage && can('tools.manage') && agent.status !== 'archived' ? (
        <AgentToolsEditor agent={agent} onAgent={setAgent} />
      ) : agent ? (
        <AgentTools agent={agent} />
      ) : null}
    </Page>
  );
}
