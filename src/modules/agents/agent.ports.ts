import type { Actor } from '../../common/actor.js';

// Copies of the shared interfaces of the models and knowledge modules (see the briefing), so this
// module depends only on these ports; ModelService and KnowledgeService satisfy them structurally.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  settings?: Record<string, unknown> | null;
  providerOptions?: Record<string, unknown> | null;
  passages?: { content: string; score: number; title?: string }[];
}

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  model: string;
}

export interface GenerateResult {
  text: string;
  usage: ModelUsage;
}

export interface Passage {
  chunkId: string;
  documentId: string;
  title: string;
  content: string;
  score: number;
}

export interface ModelPort {
  /** BAD_USER_INPUT for a bad model name, UNAVAILABLE when the provider cannot answer. */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  assertModelName(model: string): void;
}

export interface KnowledgePort {
  /** Ranked passages; [] when the base no longer exists. */
  retrieve(
    organizationId: string,
    knowledgeBaseId: string,
    query: string,
    options: { topK: number; similarityThreshold: number },
  ): Promise<Passage[]>;
  /** NOT_FOUND unless the base exists in the actor's organization. */
  assertExists(actor: Actor, knowledgeBaseId: string): Promise<void>;
}
