import { registerEnumType } from 'type-graphql';

// Lowercase names and values, so both doors show 'draft', 'active', ... as the interface does.

export enum AgentStatus {
  draft = 'draft',
  active = 'active',
  archived = 'archived',
}
registerEnumType(AgentStatus, { name: 'AgentStatus' });

export enum ConversationStatus {
  pending = 'pending',
  active = 'active',
  ended = 'ended',
  failed = 'failed',
  archived = 'archived',
}
registerEnumType(ConversationStatus, { name: 'ConversationStatus' });

export enum MessageRole {
  user = 'user',
  assistant = 'assistant',
}
registerEnumType(MessageRole, { name: 'MessageRole' });

export enum PipelineMode {
  batch = 'batch',
  streaming = 'streaming',
  sts = 'sts',
}
registerEnumType(PipelineMode, { name: 'PipelineMode' });

/** The interface names two external speech-to-speech providers without naming them; we chose these two. */
export enum StsProvider {
  openai = 'openai',
  google = 'google',
}
registerEnumType(StsProvider, { name: 'StsProvider' });
