import type { FilterQuery, QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type JsonPage, type Page } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { readListWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { readJsonList, type ListRead, type RowJson } from '../../db/read-model.js';
import { Organization } from '../organizations/organization.entity.js';
import type { KnowledgeBaseConfigInput, ModelConfigInput, VoiceConfigInput, MemoryConfigInput, ResolutionCriterionInput } from './agent-config.inputs.js';
import type { AgentListArgs } from './agent.args.js';
import { Agent } from './agent.entity.js';
import { findAgent } from './find-agent.js';
import { AgentStatus, PipelineMode, SttProvider, TtsProvider } from './agent.enums.js';
import type { CreateAgentInput } from './agent.inputs.js';
import type { KnowledgePort, ModelConfigCheck, ModelPort } from './agent.ports.js';
import { AgentResponder } from './agent.responder.js';
import type { KnowledgeBaseConfig, MemoryConfig, MessageReply, ModelConfig, ResolutionCriterion, VoiceConfig } from './agent.types.js';
import type { UpdateAgentInput } from './update-agent.inputs.js';
import { DEFAULT_LAST_MESSAGES } from './prompt.js';
import { EventWriter } from '../events/event-writer.js';
import { agentPayload } from './agent.events.js';
import { authorize } from '../organizations/roles.js';
import { toAnalysisPlan } from './analysis/analysis-plan.js';

const AGENT_SORT = ['createdAt', 'updatedAt', 'name', 'status'] as const;

/** What a page of agents reads: archived ones only when status=archived asks for them. */
function agentPage(actor: Actor, args: AgentListArgs): ListRead<Agent> {
  const field = sortField(args.sortBy, AGENT_SORT);
  const where: FilterQuery<Agent> = {
    organization: actor.organizationId,
    status: args.status ?? { $ne: AgentStatus.archived },
  };
  if (args.search) {
    const pattern = containsPattern(args.search);
    Object.assign(where, { $or: [{ name: { $ilike: pattern } }, { description: { $ilike: pattern } }] });
  }
  const orderBy = [{ [field]: args.sortOrder }, { id: 'asc' }] as QueryOrderMap<Agent>[];
  return {
    entity: Agent,
    where: where as QBFilterQuery<Agent>,
    options: { orderBy, limit: args.limit, offset: (args.page - 1) * args.limit },
    page: args.page,
    limit: args.limit,
  };
}

/** Agents of the actor's organization: CRUD, activation, soft delete and a one-off test message. */
export class AgentService {
  private readonly responder: AgentResponder;

  constructor(
    private readonly em: EntityManager,
    private readonly model: ModelPort,
    private readonly knowledge: KnowledgePort,
  ) {
    this.responder = new AgentResponder(model, knowledge);
  }

  /** Creates a draft at version 1, owned by the actor's organization and user. */
  async create(actor: Actor, input: CreateAgentInput): Promise<Agent> {
    authorize(actor, 'agents.manage');
    this.checkModel(input.modelConfig);
    if (input.knowledgeBaseConfig) await this.knowledge.assertExists(actor, input.knowledgeBaseConfig.knowledgeBaseId);
    const analysisPlan = await toAnalysisPlan(input.analysisPlan);
    const agent = this.em.create(Agent, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      description: input.description ?? null,
      instructions: input.instructions,
      policy: input.policy ?? null,
      modelConfig: toModelConfig(input.modelConfig),
      voiceConfig: toVoiceConfig(input.voiceConfig),
      memoryConfig: toMemoryConfig(input.memoryConfig),
      metadata: input.metadata ?? null,
      knowledgeBaseConfig: toKnowledgeBaseConfig(input.knowledgeBaseConfig),
      resolutionCriteria: toCriteria(input.resolutionCriteria),
      analysisPlan,
      createdBy: actor.userId,
    });
    await this.em.flush();
    return agent;
  }

  /**
   * A page of agents (agentPage). `include`: relations of each agent (Agent.conversations) read in the same statement and kept with it (see nestedRelation).
   */
  async list(actor: Actor, args: AgentListArgs, include: PageSelection = WHOLE_ROWS): Promise<Page<Agent>> {
    return readListWith(this.em, agentPage(actor, args), { organizationId: actor.organizationId, ...include });
  }

  /** The same page as `list`, each agent as the JSON text `row` builds (the REST door's answer). */
  async listJson(actor: Actor, args: AgentListArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, agentPage(actor, args), row);
  }

  async get(actor: Actor, id: string): Promise<Agent> {
    return findAgent(this.em, actor, id);
  }

  /** Changes the fields that are sent and adds one to the version; an archived agent is 409. */
  async update(actor: Actor, id: string, input: UpdateAgentInput): Promise<Agent> {
    authorize(actor, 'agents.manage');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'An archived agent cannot be changed');
    if (input.modelConfig) this.checkModel(input.modelConfig);
    if (input.knowledgeBaseConfig) await this.knowledge.assertExists(actor, input.knowledgeBaseConfig.knowledgeBaseId);
    const analysisPlan = input.analysisPlan !== undefined ? await toAnalysisPlan(input.analysisPlan) : undefined;
    if (input.name !== undefined) agent.name = input.name;
    if (input.description !== undefined) agent.description = input.description;
    if (input.instructions !== undefined) agent.instructions = input.instructions;
    if (input.policy !== undefined) agent.policy = input.policy;
    if (input.modelConfig !== undefined) agent.modelConfig = toModelConfig(input.modelConfig);
    if (input.voiceConfig !== undefined) agent.voiceConfig = toVoiceConfig(input.voiceConfig);
    if (input.memoryConfig !== undefined) agent.memoryConfig = toMemoryConfig(input.memoryConfig);
    if (input.metadata !== undefined) agent.metadata = input.metadata;
    if (input.knowledgeBaseConfig !== undefined) agent.knowledgeBaseConfig = toKnowledgeBaseConfig(input.knowledgeBaseConfig);
    if (input.resolutionCriteria !== undefined) agent.resolutionCriteria = toCriteria(input.resolutionCriteria);
    if (analysisPlan !== undefined) agent.analysisPlan = analysisPlan;
    agent.version += 1;
    agent.updatedAt = new Date();
    await this.em.flush();
    return agent;
  }

  /** draft → active; from active or archived the move is invalid (409). */
  async activate(actor: Actor, id: string): Promise<Agent> {
    authorize(actor, 'agents.manage');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status !== AgentStatus.draft) {
      throw new AppError('CONFLICT', `An agent that is ${agent.status} cannot be activated; only a draft can`);
    }
    agent.status = AgentStatus.active;
    EventWriter.stage(this.em, { organizationId: actor.organizationId, type: 'agent.activated', payload: agentPayload(agent) });
    await this.em.flush();
    return agent;
  }

  /** Soft delete: the row stays, archived with a deletedAt. Deleting again answers the same agent. */
  async delete(actor: Actor, id: string): Promise<Agent> {
    authorize(actor, 'agents.manage');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status !== AgentStatus.archived || !agent.deletedAt) {
      agent.status = AgentStatus.archived;
      agent.deletedAt ??= new Date();
      EventWriter.stage(this.em, { organizationId: actor.organizationId, type: 'agent.archived', payload: agentPayload(agent) });
      await this.em.flush();
    }
    return agent;
  }

  /** One message to the agent, nothing stored; an archived agent is 409. */
  async test(actor: Actor, id: string, message: string): Promise<MessageReply> {
    authorize(actor, 'agents.talk');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'An archived agent cannot be tested');
    this.checkModel(agent.modelConfig);
    return this.responder.reply(agent, [], message);
  }

  /** The model registry decides the name and the settings; a bare error is reported on modelConfig.model on both doors. */
  private checkModel(modelConfig: ModelConfigCheck): void {
    try {
      this.model.assertModelConfig(modelConfig);
    } catch (error) {
      if (error instanceof AppError && error.code === 'BAD_USER_INPUT' && !error.errors?.length) {
        throw AppError.badInput([{ field: 'modelConfig.model', message: error.message }]);
      }
      throw error;
    }
  }
}

function toModelConfig(input: ModelConfigInput): ModelConfig {
  return { model: input.model, modelSettings: input.modelSettings ?? null, providerOptions: input.providerOptions ?? null };
}

/**
 * The fields only one pipeline reads. Sent with another pipelineMode they would be stored and never
 * used — an agent that says it speaks through a provider it never calls — so they are refused.
 */
const PIPELINE_FIELDS: Record<'stsProvider' | 'sttProvider' | 'sttModel' | 'ttsProvider' | 'ttsModel', PipelineMode> = {
  stsProvider: PipelineMode.sts,
  sttProvider: PipelineMode.streaming,
  sttModel: PipelineMode.streaming,
  ttsProvider: PipelineMode.streaming,
  ttsModel: PipelineMode.streaming,
};

function toVoiceConfig(input: VoiceConfigInput | null | undefined): VoiceConfig | null {
  if (!input) return null;
  const misplaced = Object.entries(PIPELINE_FIELDS).filter(([field, mode]) => input[field as keyof typeof PIPELINE_FIELDS] !== undefined && input.pipelineMode !== mode);
  if (misplaced.length > 0) {
    throw AppError.badInput(
      misplaced.map(([field, mode]) => ({ field: `voiceConfig.${field}`, message: `${field} applies only to pipelineMode "${mode}" (this agent's is "${input.pipelineMode}")` })),
    );
  }
  const streaming = input.pipelineMode === PipelineMode.streaming;
  return {
    pipelineMode: input.pipelineMode,
    voiceId: input.voiceId ?? null,
    stsProvider: input.stsProvider ?? null,
    // A streaming agent names its recognizer and synthesizer; unset, the defaults are stored so every answer says what will speak.
    sttProvider: input.sttProvider ?? (streaming ? SttProvider.deepgram : null),
    sttModel: input.sttModel ?? null,
    ttsProvider: input.ttsProvider ?? (streaming ? TtsProvider.elevenlabs : null),
    ttsModel: input.ttsModel ?? null,
    language: input.language ?? null,
  };
}

function toMemoryConfig(input: MemoryConfigInput | null | undefined): MemoryConfig | null {
  return input ? { enabled: input.enabled, lastMessages: input.lastMessages ?? DEFAULT_LAST_MESSAGES, semanticRecall: input.semanticRecall ?? null } : null;
}

function toKnowledgeBaseConfig(input: KnowledgeBaseConfigInput | null | undefined): KnowledgeBaseConfig | null {
  return input
    ? { knowledgeBaseId: input.knowledgeBaseId, topK: input.topK ?? 3, similarityThreshold: input.similarityThreshold ?? 0 }
    : null;
}

function toCriteria(input: ResolutionCriterionInput[] | undefined): ResolutionCriterion[] {
  return (input ?? []).map((criterion) => ({ label: criterion.label, description: criterion.description }));
}
