import { registerEnumType } from 'type-graphql';
import { enumDescriptions, RECOGNIZERS, SPEECH_TO_SPEECH, SYNTHESIZERS } from '../voice/speech-providers.js';

// Lowercase names and values, so both doors show 'draft', 'active', ... as the interface does.

export enum AgentStatus {
  draft = 'draft',
  active = 'active',
  archived = 'archived',
}
registerEnumType(AgentStatus, {
  name: 'AgentStatus',
  description: 'Where an agent is in its life: draft → active by activate; archived when deleted',
  valuesConfig: {
    draft: { description: 'Created, not yet activated' },
    active: { description: 'Activated; activating again is CONFLICT' },
    archived: { description: 'Deleted (the row is kept, with deletedAt); left out of default lists' },
  },
});

export enum ConversationStatus {
  pending = 'pending',
  active = 'active',
  ended = 'ended',
  failed = 'failed',
  archived = 'archived',
}
registerEnumType(ConversationStatus, {
  name: 'ConversationStatus',
  description: 'Where a conversation is in its life',
  valuesConfig: {
    pending: { description: 'Started, no message yet' },
    active: { description: 'At least one message was sent' },
    ended: { description: 'Ended by a user; its resolution criteria were evaluated' },
    failed: { description: 'The model could not answer' },
    archived: { description: 'Its agent was deleted' },
  },
});

export enum MessageRole {
  user = 'user',
  assistant = 'assistant',
}
registerEnumType(MessageRole, {
  name: 'MessageRole',
  description: 'Who wrote a message',
  valuesConfig: {
    user: { description: 'The caller' },
    assistant: { description: 'The agent’s model' },
  },
});

export enum PipelineMode {
  batch = 'batch',
  streaming = 'streaming',
  sts = 'sts',
}
registerEnumType(PipelineMode, {
  name: 'PipelineMode',
  description: 'How a voice agent turns speech into answers',
  valuesConfig: {
    batch: { description: 'Speech to text, the model, then text to speech, one turn at a time' },
    streaming: { description: 'The same steps, streamed as they go' },
    sts: { description: 'A speech-to-speech model of stsProvider' },
  },
});

/** The interface names two external speech-to-speech providers without naming them; we chose these two. */
export enum StsProvider {
  openai = 'openai',
  google = 'google',
}
registerEnumType(StsProvider, {
  name: 'StsProvider',
  description: 'The speech-to-speech provider of an sts voice pipeline',
  valuesConfig: enumDescriptions(SPEECH_TO_SPEECH),
});

/** The recognizer of a streaming voice pipeline (the caller's speech to text, as it comes). */
export enum SttProvider {
  deepgram = 'deepgram',
  openai = 'openai',
  builtin = 'builtin',
}
registerEnumType(SttProvider, {
  name: 'SttProvider',
  description: 'The speech recognizer of a streaming voice pipeline',
  valuesConfig: enumDescriptions(RECOGNIZERS),
});

/** The synthesizer of a streaming voice pipeline (the agent's text to speech, as it is written). */
export enum TtsProvider {
  elevenlabs = 'elevenlabs',
  openai = 'openai',
  builtin = 'builtin',
}
registerEnumType(TtsProvider, {
  name: 'TtsProvider',
  description: 'The speech synthesizer of a streaming voice pipeline',
  valuesConfig: enumDescriptions(SYNTHESIZERS),
});

export enum FirstMessageMode {
  agent_speaks_first = 'agent_speaks_first',
  wait_for_caller = 'wait_for_caller',
}
registerEnumType(FirstMessageMode, {
  name: 'FirstMessageMode',
  description: 'Who speaks first when a call is answered',
  valuesConfig: {
    agent_speaks_first: { description: 'The agent says its first message as soon as the call is answered (the default)' },
    wait_for_caller: { description: 'The agent says nothing until the caller has spoken' },
  },
});

/** When the caller's speech cuts the agent's reply on the phone (voiceConfig.interruptions.mode). */
export enum InterruptionMode {
  words = 'words',
  any = 'any',
  never = 'never',
}
registerEnumType(InterruptionMode, {
  name: 'InterruptionMode',
  description: 'When the caller speaking over the agent cuts its reply',
  valuesConfig: {
    words: { description: 'At least minWords words not in the ignore list (a back-channel such as "mhm" does not cut); the default' },
    any: { description: 'Any recognized word cuts, back-channels included' },
    never: { description: 'Nothing the caller says or presses cuts the reply; it is answered once the reply was heard' },
  },
});

/** How the end of the caller's turn is found (voiceConfig.turnDetection.type). */
export enum TurnDetectionType {
  silence = 'silence',
  semantic = 'semantic',
}
registerEnumType(TurnDetectionType, {
  name: 'TurnDetectionType',
  description: 'How the end of the caller’s turn is found',
  valuesConfig: {
    silence: { description: 'A pause of silenceMs (the provider’s voice activity detection); the default' },
    semantic: {
      description:
        'The provider’s model judges whether the caller has finished (OpenAI semantic_vad; Deepgram Flux on /v2/listen in streaming); silence where a provider has none',
    },
  },
});

/** How eager a semantic turn detector is to answer. */
export enum TurnEagerness {
  low = 'low',
  medium = 'medium',
  high = 'high',
  auto = 'auto',
}
registerEnumType(TurnEagerness, {
  name: 'TurnEagerness',
  description: 'How soon a semantic turn detector answers',
  valuesConfig: {
    low: { description: 'Waits longest for the caller to go on (OpenAI: up to 8 s)' },
    medium: { description: 'OpenAI: up to 4 s' },
    high: { description: 'Answers soonest (OpenAI: up to 2 s)' },
    auto: { description: 'The provider’s default (OpenAI: medium)' },
  },
});
