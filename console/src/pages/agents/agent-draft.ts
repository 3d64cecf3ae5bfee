import type {
  AgentFormFragment,
  CreateAgentInput,
  FirstMessageMode,
  PipelineMode,
  StsProvider,
  SttProvider,
  TtsProvider,
  UpdateAgentInput,
} from '../../api/generated';

export interface VariableDraft {
  name: string;
  default: string;
  description: string;
}

/** What the agent form edits, as strings for its inputs; `toInput` turns it into the API's input. */
export interface AgentDraft {
  name: string;
  description: string;
  instructions: string;
  /** A new hidden policy; empty keeps the one set (it is never shown, not even here). */
  policy: string;
  removePolicy: boolean;
  model: string;
  pipelineMode: '' | PipelineMode;
  sttProvider: '' | SttProvider;
  ttsProvider: '' | TtsProvider;
  stsProvider: '' | StsProvider;
  voiceId: string;
  language: string;
  memoryEnabled: boolean;
  lastMessages: string;
  knowledgeBaseId: string;
  topK: string;
  similarityThreshold: string;
  variables: VariableDraft[];
  firstMessage: string;
  firstMessageMode: FirstMessageMode;
}

export const NEW_AGENT: AgentDraft = {
  name: '',
  description: '',
  instructions: '',
  policy: '',
  removePolicy: false,
  model: 'builtin/echo',
  pipelineMode: '',
  sttProvider: '',
  ttsProvider: '',
  stsProvider: '',
  voiceId: '',
  language: '',
  memoryEnabled: false,
  lastMessages: '10',
  knowledgeBaseId: '',
  topK: '5',
  similarityThreshold: '0',
  variables: [],
  firstMessage: '',
  firstMessageMode: 'agent_speaks_first',
};

export function draftOf(agent: AgentFormFragment): AgentDraft {
  const knowledge = (agent.knowledgeBaseConfig ?? {}) as { knowledgeBaseId?: string; topK?: number; similarityThreshold?: number };
  return {
    name: agent.name,
    description: agent.description ?? '',
    instructions: agent.instructions,
    policy: '',
    removePolicy: false,
    model: agent.modelConfig.model,
    pipelineMode: agent.voiceConfig?.pipelineMode ?? '',
    sttProvider: agent.voiceConfig?.sttProvider ?? '',
    ttsProvider: agent.voiceConfig?.ttsProvider ?? '',
    stsProvider: agent.voiceConfig?.stsProvider ?? '',
    voiceId: agent.voiceConfig?.voiceId ?? '',
    language: agent.voiceConfig?.language ?? '',
    memoryEnabled: agent.memoryConfig?.enabled ?? false,
    lastMessages: String(agent.memoryConfig?.lastMessages ?? 10),
    knowledgeBaseId: knowledge.knowledgeBaseId ?? '',
    topK: String(knowledge.topK ?? 5),
    similarityThreshold: String(knowledge.similarityThreshold ?? 0),
    variables: agent.variables.map((variable) => ({ name: variable.name, default: variable.default ?? '', description: variable.description ?? '' })),
    firstMessage: agent.firstMessage ?? '',
    firstMessageMode: agent.firstMessageMode,
  };
}

const text = (value: string): string | undefined => (value.trim() === '' ? undefined : value);
/** A number typed in a field, or the text itself when it is none, so the API's own error names the field. */
const numberOf = (value: string): number => (value.trim() === '' ? Number.NaN : Number(value));

/**
 * The input of createAgent or updateAgent. An update sends what the form holds (the API bumps the
 * version), its model's settings and options kept as they were; the policy only when one was typed.
 */
export function toInput(draft: AgentDraft, agent: AgentFormFragment | null, mayChangePolicy: boolean): CreateAgentInput & UpdateAgentInput {
  const voice = draft.pipelineMode
    ? {
        pipelineMode: draft.pipelineMode,
        sttProvider: draft.sttProvider || undefined,
        ttsProvider: draft.ttsProvider || undefined,
        stsProvider: draft.stsProvider || undefined,
        voiceId: text(draft.voiceId),
        language: text(draft.language),
      }
    : undefined;
  const input: CreateAgentInput & UpdateAgentInput = {
    name: draft.name,
    description: text(draft.description) ?? (agent?.description ? '' : undefined),
    instructions: draft.instructions,
    modelConfig: {
      model: draft.model,
      ...(agent && agent.modelConfig.model === draft.model
        ? { modelSettings: agent.modelConfig.modelSettings ?? undefined, providerOptions: agent.modelConfig.providerOptions ?? undefined }
        : {}),
    },
    voiceConfig: voice,
    memoryConfig: { enabled: draft.memoryEnabled, lastMessages: draft.memoryEnabled ? numberOf(draft.lastMessages) : undefined },
    knowledgeBaseConfig: draft.knowledgeBaseId
      ? { knowledgeBaseId: draft.knowledgeBaseId, topK: numberOf(draft.topK), similarityThreshold: numberOf(draft.similarityThreshold) }
      : undefined,
    variables: draft.variables.map((variable) => ({ name: variable.name, default: text(variable.default), description: text(variable.description) })),
    firstMessage: text(draft.firstMessage) ?? (agent?.firstMessage ? '' : undefined),
    firstMessageMode: draft.firstMessageMode,
  };
  if (mayChangePolicy && draft.policy.trim() !== '') input.policy = draft.policy;
  else if (mayChangePolicy && draft.removePolicy) input.policy = '';
  return input;
}

/** The input fields the agent form shows an error beside; any other the API names is listed above the save button. */
export const AGENT_FIELDS = [
  'name',
  'description',
  'instructions',
  'policy',
  'modelConfig.model',
  'voiceConfig.pipelineMode',
  'voiceConfig.sttProvider',
  'voiceConfig.ttsProvider',
  'voiceConfig.stsProvider',
  'voiceConfig.voiceId',
  'voiceConfig.language',
  'memoryConfig.lastMessages',
  'knowledgeBaseConfig.knowledgeBaseId',
  'knowledgeBaseConfig.topK',
  'knowledgeBaseConfig.similarityThreshold',
  'firstMessage',
  'firstMessageMode',
];
