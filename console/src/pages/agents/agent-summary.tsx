import type { AgentFormFragment } from '../../api/generated';

/** The agent's settings for those who may not change them: no control, nothing to press. */
export function AgentSummary({ agent }: { agent: AgentFormFragment }) {
  const knowledge = agent.knowledgeBaseConfig as { knowledgeBaseId?: string; topK?: number } | null;
  return (
    <dl className="facts" data-testid="agent-summary">
      <dt>Description</dt>
      <dd>{agent.description || '—'}</dd>
      <dt>Instructions</dt>
      <dd className="prose">{agent.instructions}</dd>
      <dt>Model</dt>
      <dd>
        <code>{agent.modelConfig.model}</code>
      </dd>
      <dt>Voice</dt>
      <dd>
        {agent.voiceConfig
          ? [
              agent.voiceConfig.pipelineMode,
              agent.voiceConfig.sttProvider,
              agent.voiceConfig.ttsProvider,
              agent.voiceConfig.stsProvider,
              agent.voiceConfig.voiceId,
            ]
              .filter(Boolean)
              .join(' · ')
          : 'No voice'}
      </dd>
      <dt>First message</dt>
      <dd>
        {agent.firstMessage || '—'} ({agent.firstMessageMode.replace(/_/g, ' ')})
      </dd>
      <dt>Memory</dt>
      <dd>{agent.memoryConfig?.enabled ? `The last ${agent.memoryConfig.lastMessages} messages` : 'Off'}</dd>
      <dt>Knowledge base</dt>
      <dd>{knowledge?.knowledgeBaseId ? `${knowledge.knowledgeBaseId} (top ${knowledge.topK ?? 5})` : 'None'}</dd>
      <dt>Variables</dt>
      <dd>{agent.variables.length > 0 ? agent.variables.map((variable) => variable.name).join(', ') : 'None'}</dd>
    </dl>
  );
}
