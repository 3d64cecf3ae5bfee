import type { Actor } from '../../common/actor.js';
import type { Passage } from '../knowledge/knowledge.service.js';
import type { ModelConfigCheck } from '../models/model.service.js';
import type { GenerateRequest, GenerateResult, ModelTool } from '../models/model.types.js';
import type { FieldError } from '../../common/errors.js';
import type { AgentToolChoice, ToolSession } from '../tools/tool-session.types.js';
import type { ToolCallRecord } from '../tools/tool-call.store.js';

export type { ModelConfigCheck } from '../models/model.service.js';
export type { ChatMessage, GenerateRequest, GenerateResult, ModelUsage } from '../models/model.types.js';
export type { Passage } from '../knowledge/knowledge.service.js';

// What the agents module needs from the models and knowledge modules: ModelService and
// KnowledgeService satisfy these, and tests can wrap them to observe the prompt.

export interface ModelPort {
  /** BAD_USER_INPUT for a bad model name, UNAVAILABLE when the provider cannot answer. */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** The BAD_USER_INPUT generate would throw for this model name and settings, before anything is stored. */
  assertModelConfig(modelConfig: ModelConfigCheck): void;
}

export interface KnowledgePort {
  /** Ranked passages; [] when the base no longer exists. */
  retrieve(organizationId: string, knowledgeBaseId: string, query: string, options: { topK: number; similarityThreshold: number }): Promise<Passage[]>;
  /** NOT_FOUND unless the base exists in the actor's organization. */
  assertExists(actor: Actor, knowledgeBaseId: string): Promise<void>;
}

/**
 * What the agents module needs from the tools module: the agent's tools for one session (the
 * model runs them), the store of their records, and the check of an agent's choice when it is saved.
 * The tools module's ToolRunner, ToolCallStore and ToolCatalog satisfy it (composed in services.ts).
 */
export interface ToolPort {
  toolsFor(agent: AgentToolChoice, session: ToolSession): Promise<ModelTool[]>;
  store(record: ToolCallRecord): Promise<ToolCallRecord | null>;
  choiceErrors(organizationId: string, choice: AgentToolChoice): Promise<FieldError[]>;
  names(organizationId: string, choice: AgentToolChoice): Promise<string[]>;
}
