import type { ApiError } from '../../api/client';
import { CheckboxField, SelectField, TextArea, TextField } from '../../components/forms';
import type { AgentDraft } from './agent-draft';

const PIPELINES = [
  { value: '', label: 'No voice (text only)' },
  { value: 'batch', label: 'batch: the carrier recognizes and speaks' },
  { value: 'streaming', label: 'streaming: recognizer, model and synthesizer streamed' },
  { value: 'sts', label: 'sts: one speech-to-speech model' },
];
const STT = [
  { value: '', label: 'Default' },
  { value: 'builtin', label: 'builtin (offline)' },
  { value: 'deepgram', label: 'deepgram' },
  { value: 'openai', label: 'openai' },
];
const TTS = [
  { value: '', label: 'Default' },
  { value: 'builtin', label: 'builtin (offline)' },
  { value: 'elevenlabs', label: 'elevenlabs' },
  { value: 'openai', label: 'openai' },
];
const STS = [
  { value: '', label: 'Default' },
  { value: 'openai', label: 'openai' },
  { value: 'google', label: 'google' },
];
const FIRST_MESSAGE = [
  { value: 'agent_speaks_first', label: 'The agent speaks first' },
  { value: 'wait_for_caller', label: 'Wait for the caller' },
];

interface Props {
  draft: AgentDraft;
  onChange: (draft: AgentDraft) => void;
  error: ApiError | null;
  hasPolicy: boolean;
  knowledgeBases: { id: string; name: string }[];
}

/** The agent form's fields; each shows the API's error for the input field it edits. */
export function AgentFields({ draft, onChange, error, hasPolicy, knowledgeBases }: Props) {
  const set =
    <K extends keyof AgentDraft>(key: K) =>
    (value: AgentDraft[K]) =>
      onChange({ ...draft, [key]: value });
  const setVariable = (index: number, key: 'name' | 'default' | 'description', value: string) =>
    onChange({ ...draft, variables: draft.variables.map((variable, at) => (at === index ? { ...variable, [key]: value } : variable)) });
  return (
    <>
      <fieldset>
        <legend>Agent</legend>
        <TextField label="Name" field="name" value={draft.name} onChange={set('name')} error={error} required />
        <TextField label="Description" field="description" value={draft.description} onChange={set('description')} error={error} />
        <TextArea label="Instructions" field="instructions" value={draft.instructions} onChange={set('instructions')} error={error} rows={6} required />
        <TextArea
          label={hasPolicy ? 'Replace the hidden policy' : 'Hidden policy'}
          field="policy"
          value={draft.policy}
          onChange={set('policy')}
          error={error}
          hint={
            hasPolicy
              ? 'A policy is set. It is sent to the model only and never shown, here neither; leave this empty to keep it.'
              : 'Rules the model follows and never tells a caller; never shown once saved.'
          }
        />
        {hasPolicy ? (
          <CheckboxField label="Remove the hidden policy" field="removePolicy" checked={draft.removePolicy} onChange={set('removePolicy')} error={error} />
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Model and voice</legend>
        <TextField
          label="Model"
          field="modelConfig.model"
          value={draft.model}
          onChange={set('model')}
          error={error}
          hint="provider/model, e.g. builtin/echo or openai/gpt-4o-mini"
          required
        />
        <SelectField
          label="Voice mode"
          field="voiceConfig.pipelineMode"
          value={draft.pipelineMode}
          onChange={(value) => set('pipelineMode')(value as AgentDraft['pipelineMode'])}
          options={PIPELINES}
          error={error}
        />
        {draft.pipelineMode === 'streaming' ? (
          <>
            <SelectField
              label="Recognizer"
              field="voiceConfig.sttProvider"
              value={draft.sttProvider}
              onChange={(value) => set('sttProvider')(value as AgentDraft['sttProvider'])}
              options={STT}
              error={error}
            />
            <SelectField
              label="Synthesizer"
              field="voiceConfig.ttsProvider"
              value={draft.ttsProvider}
              onChange={(value) => set('ttsProvider')(value as AgentDraft['ttsProvider'])}
              options={TTS}
              error={error}
            />
          </>
        ) : null}
        {draft.pipelineMode === 'sts' ? (
          <SelectField
            label="Speech-to-speech provider"
            field="voiceConfig.stsProvider"
            value={draft.stsProvider}
            onChange={(value) => set('stsProvider')(value as AgentDraft['stsProvider'])}
            options={STS}
            error={error}
          />
        ) : null}
        {draft.pipelineMode ? (
          <>
            <TextField label="Voice" field="voiceConfig.voiceId" value={draft.voiceId} onChange={set('voiceId')} error={error} />
            <TextField
              label="Language"
              field="voiceConfig.language"
              value={draft.language}
              onChange={set('language')}
              error={error}
              hint="BCP 47, e.g. en-US"
            />
          </>
        ) : null}
        <TextArea label="First message" field="firstMessage" value={draft.firstMessage} onChange={set('firstMessage')} error={error} rows={2} />
        <SelectField
          label="Who speaks first"
          field="firstMessageMode"
          value={draft.firstMessageMode}
          onChange={(value) => set('firstMessageMode')(value as AgentDraft['firstMessageMode'])}
          options={FIRST_MESSAGE}
          error={error}
        />
      </fieldset>
      <fieldset>
        <legend>Memory and knowledge</legend>
        <CheckboxField
          label="Remember earlier messages of a conversation"
          field="memoryConfig.enabled"
          checked={draft.memoryEnabled}
          onChange={set('memoryEnabled')}
          error={error}
        />
        {draft.memoryEnabled ? (
          <TextField
            label="Messages remembered"
            field="memoryConfig.lastMessages"
            type="number"
            inputMode="numeric"
            value={draft.lastMessages}
            onChange={set('lastMessages')}
            error={error}
          />
        ) : null}
        <SelectField
          label="Knowledge base"
          field="knowledgeBaseConfig.knowledgeBaseId"
          value={draft.knowledgeBaseId}
          onChange={set('knowledgeBaseId')}
          options={[{ value: '', label: 'None' }, ...knowledgeBases.map((base) => ({ value: base.id, label: base.name }))]}
          error={error}
        />
        {draft.knowledgeBaseId ? (
          <>
            <TextField
              label="Passages per answer (topK)"
              field="knowledgeBaseConfig.topK"
              type="number"
              inputMode="numeric"
              value={draft.topK}
              onChange={set('topK')}
              error={error}
            />
            <TextField
              label="Similarity threshold"
              field="knowledgeBaseConfig.similarityThreshold"
              type="number"
              inputMode="decimal"
              value={draft.similarityThreshold}
              onChange={set('similarityThreshold')}
              error={error}
            />
          </>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Variables</legend>
        <p className="hint">Filled into the instructions, the policy and the first message as {'{{name}}'}.</p>
        {draft.variables.map((variable, index) => (
          <div className="variable" key={index}>
            <TextField
              label={`Variable ${index + 1} name`}
              field={`variables.${index}.name`}
              value={variable.name}
              onChange={(value) => setVariable(index, 'name', value)}
              error={error}
            />
            <TextField
              label={`Variable ${index + 1} default`}
              field={`variables.${index}.default`}
              value={variable.default}
              onChange={(value) => setVariable(index, 'default', value)}
              error={error}
            />
            <TextField
              label={`Variable ${index + 1} description`}
              field={`variables.${index}.description`}
              value={variable.description}
              onChange={(value) => setVariable(index, 'description', value)}
              error={error}
            />
            <button type="button" onClick={() => onChange({ ...draft, variables: draft.variables.filter((_, at) => at !== index) })}>
              Remove variable {index + 1}
            </button>
          </div>
        ))}
        <button type="button" onClick={() => onChange({ ...draft, variables: [...draft.variables, { name: '', default: '', description: '' }] })}>
          Add a variable
        </button>
      </fieldset>
    </>
  );
}
