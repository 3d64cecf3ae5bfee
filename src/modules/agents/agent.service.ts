import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { nameOrDescriptionMatch, sortField, type JsonPage, type Page } from '../../common/pagination.js';
import { readListWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { readJsonList, type ListRead, type RowJson } from '../../db/read-model.js';
import { sortedPage } from '../../db/keyset.js';
import { Organization } from '../organizations/organization.entity.js';
import type { KnowledgeBaseConfigInput, ModelConfigInput, VoiceConfigInput, MemoryConfigInput, ResolutionCriterionInput } from './agent-config.inputs.js';
import type { AgentListArgs } from './agent.args.js';
import { Agent } from './agent.entity.js';
import { findAgent } from './find-agent.js';
import { AgentStatus, FirstMessageMode, PipelineMode, SttProvider, TtsProvider } from './agent.enums.js';
import type { CreateAgentInput } from './agent.inputs.js';
import type { KnowledgePort, ModelConfigCheck, ModelPort, ToolPort } from './agent.ports.js';
import { callsTools } from '../models/model-name.js';
import { AgentResponder } from './agent.responder.js';
import type { KnowledgeBaseConfig, MemoryConfig, MessageReply, ModelConfig, ResolutionCriterion, VoiceConfig } from './agent.types.js';
import type { UpdateAgentInput } from './update-agent.inputs.js';
import { DEFAULT_LAST_MESSAGES } from './prompt.js';
import { EventWriter } from '../events/event-writer.js';
import { agentPayload } from './agent.events.js';
import { authorize } from '../organizations/roles.js';
import { toAnalysisPlan } from './analysis/analysis-plan.js';
import { assertDeclared, assertTemplates, toVariables, typedContext, variablesOrRefuse } from './templates/agent-templates.js';
import { givenValues } from './templates/template-values.js';
import { agentUsers, describeUsers } from './agent-usage.js';
import { DEFAULT_RECOGNIZER, DEFAULT_SYNTHESIZER, voiceModelProblems } from '../voice/speech-providers.js';
import { toTransferDestinations } from './transfer-destination.types.js';
import { voiceTurns } from './voice-turns.js';

const AGENT_SORT = ['createdAt', 'updatedAt', 'name', 'status'] as const;

/** What a page of agents reads: archived ones only when status=archived asks for them. */
function agentPage(actor: Actor, args: AgentListArgs): ListRead<Agent> {
  const field = sortField(args.sortBy, AGENT_SORT);
  const where: FilterQuery<Agent> = {
    organization: actor.organizationId,
    status: args.status ?? { $ne: AgentStatus.archived },
  };
  Object.assign(where, nameOrDescriptionMatch(args.search));
  return {
    entity: Agent,
    where: where as QBFilterQuery<Agent>,
    options: sortedPage<Agent>(args, field),
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
    /** Called in the transaction that changes an active agent's model or voice, after the change: refuses (409) one that would leave an active program unable to run. */
    private readonly onChanged?: (em: EntityManager, actor: Actor, agentId: string) => Promise<void>,
    private readonly tools: ToolPort | null = null,
  ) {
    this.responder = new AgentResponder(model, knowledge, tools);
  }

  /** Creates a draft at version 1, owned by the actor's organization and user. */
  async create(actor: Actor, input: CreateAgentInput): Promise<Agent> {
    authorize(actor, 'agents.manage');
    this.checkModel(input.modelConfig);
    assertTemplates(input);
    if (input.knowledgeBaseConfig) await this.knowledge.assertExists(actor, input.knowledgeBaseConfig.knowledgeBaseId);
    const choice = { toolIds: input.toolIds ?? [], mcpTools: toMcpTools(input.mcpTools) };
    await this.assertToolChoice(actor, choice);
    const analysisPlan = await toAnalysisPlan(input.analysisPlan);
    const voiceConfig = toVoiceConfig(input.voiceConfig);
    assertVoiceModels(input.modelConfig.model, voiceConfig);
    const agent = this.em.create(Agent, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      description: input.description ?? null,
      instructions: input.instructions,
      policy: input.policy ?? null,
      firstMessage: input.firstMessage ?? null,
      firstMessageMode: input.firstMessageMode ?? FirstMessageMode.agent_speaks_first,
      variables: toVariables(input.variables),
      modelConfig: toModelConfig(input.modelConfig),
      voiceConfig,
      memoryConfig: toMemoryConfig(input.memoryConfig),
      metadata: input.metadata ?? null,
      knowledgeBaseConfig: toKnowledgeBaseConfig(input.knowledgeBaseConfig),
      resolutionCriteria: toCriteria(input.resolutionCriteria),
      analysisPlan,
      toolIds: choice.toolIds,
      mcpTools: choice.mcpTools,
      transferDestinations: toTransferDestinations(input.transferDestinations),
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

  /**
   * Changes the fields that are sent and adds one to the version; an archived agent is 409, and so is
   * an active one whose templates would use an undeclared variable. An agent
   * active programs call through changes only into one they can still run with (`onChanged`: the
   * checks activation makes, 409 naming what is missing), in the same transaction.
   */
  async update(actor: Actor, id: string, input: UpdateAgentInput): Promise<Agent> {
    authorize(actor, 'agents.manage');
    return this.em.transactional(async (tx) => {
      const agent = await findAgent(tx, actor, id);
      if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'An archived agent cannot be changed');
      if (input.modelConfig) this.checkModel(input.modelConfig);
      assertTemplates(input);
      if (input.knowledgeBaseConfig) await this.knowledge.assertExists(actor, input.knowledgeBaseConfig.knowledgeBaseId);
      const analysisPlan = input.analysisPlan !== undefined ? await toAnalysisPlan(input.analysisPlan) : undefined;
      if (input.name !== undefined) agent.name = input.name;
      if (input.description !== undefined) agent.description = input.description;
      if (input.instructions !== undefined) agent.instructions = input.instructions;
      if (input.policy !== undefined) agent.policy = input.policy;
      if (input.firstMessage !== undefined) agent.firstMessage = input.firstMessage;
      if (input.firstMessageMode !== undefined) agent.firstMessageMode = input.firstMessageMode;
      if (input.variables !== undefined) agent.variables = toVariables(input.variables);
      if (input.modelConfig !== undefined) agent.modelConfig = toModelConfig(input.modelConfig);
      if (input.voiceConfig !== undefined) agent.voiceConfig = toVoiceConfig(input.voiceConfig);
      if (input.memoryConfig !== undefined) agent.memoryConfig = toMemoryConfig(input.memoryConfig);
      if (input.metadata !== undefined) agent.metadata = input.metadata;
      if (input.knowledgeBaseConfig !== undefined) agent.knowledgeBaseConfig = toKnowledgeBaseConfig(input.knowledgeBaseConfig);
      if (input.resolutionCriteria !== undefined) agent.resolutionCriteria = toCriteria(input.resolutionCriteria);
      if (analysisPlan !== undefined) agent.analysisPlan = analysisPlan;
      if (input.transferDestinations !== undefined) agent.transferDestinations = toTransferDestinations(input.transferDestinations);
      if (input.toolIds !== undefined || input.mcpTools !== undefined) {
        const choice = { toolIds: input.toolIds ?? agent.toolIds, mcpTools: input.mcpTools !== undefined ? toMcpTools(input.mcpTools) : agent.mcpTools };
        await this.assertToolChoice(actor, choice);
        agent.toolIds = choice.toolIds;
        agent.mcpTools = choice.mcpTools;
      }
      // An active agent keeps what activation checked: every name its templates use is declared (409
      // naming the others), and its model can call the tools it lists.
      if (agent.status === AgentStatus.active) {
        assertDeclared(agent);
        await this.assertModelCallsTools(agent);
      }
      // On what the agent becomes: a new voice pipeline is checked against the model it keeps, and the reverse.
      if (input.modelConfig !== undefined || input.voiceConfig !== undefined) assertVoiceModels(agent.modelConfig.model, agent.voiceConfig);
      agent.version += 1;
      agent.updatedAt = new Date();
      await tx.flush();
      if (agent.status === AgentStatus.active && (input.modelConfig !== undefined || input.voiceConfig !== undefined))
        await this.onChanged?.(tx, actor, agent.id);
      return agent;
    });
  }

  /** draft → active; from active or archived the move is invalid (409), and so is a template naming a variable the agent does not declare. */
  async activate(actor: Actor, id: string): Promise<Agent> {
    authorize(actor, 'agents.manage');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status !== AgentStatus.draft) {
      throw new AppError('CONFLICT', `An agent that is ${agent.status} cannot be activated; only a draft can`);
    }
    assertDeclared(agent);
    // An agent saved before its models were checked: activated, its calls would be refused.
    const unlisted = voiceModelProblems({ model: agent.modelConfig.model, voiceConfig: agent.voiceConfig });
    if (unlisted.length > 0) throw new AppError('CONFLICT', `The agent cannot be activated: ${unlisted.map((problem) => problem.message).join('; ')}`);
    await this.assertModelCallsTools(agent);
    agent.status = AgentStatus.active;
    EventWriter.stage(this.em, { organizationId: actor.organizationId, type: 'agent.activated', payload: agentPayload(agent) });
    await this.em.flush();
    return agent;
  }

  /**
   * Soft delete: the row stays, archived with a deletedAt. Deleting again answers the same agent.
   * An agent something would still call through (an active program, directly or by its flow; a
   * number's inbound calls) is not deleted: 409 naming them, so no call ever reaches an archived
   * agent. The agent's row is locked, and activation reads it under a share lock, so a program
   * activated meanwhile is seen here, or sees the agent archived.
   */
  async delete(actor: Actor, id: string): Promise<Agent> {
    authorize(actor, 'agents.manage');
    return this.em.transactional(async (tx) => {
      const agent = await findAgent(tx, actor, id);
      if (agent.status === AgentStatus.archived && agent.deletedAt) return agent;
      await tx.lock(agent, LockMode.PESSIMISTIC_WRITE);
      const users = await agentUsers(tx, actor.organizationId, agent.id);
      if (users.programs.length > 0 || users.numbers.length > 0) {
        throw new AppError(
          'CONFLICT',
          `The agent "${agent.name}" cannot be deleted while ${describeUsers(users)} call through it: give them another agent ` +
            '(PUT /api/programs/{id} agentId or flowId, PUT /api/call-flows/{id}, PUT /api/phone-numbers/{id}) or delete those programs first',
        );
      }
      agent.status = AgentStatus.archived;
      agent.deletedAt ??= new Date();
      EventWriter.stage(tx, { organizationId: actor.organizationId, type: 'agent.archived', payload: agentPayload(agent) });
      await tx.flush();
      return agent;
    });
  }

  /**
   * One message to the agent, nothing stored; an archived agent is 409. `variables` fill its
   * templates (400 naming every variable with neither a value nor a default); there is no call or contact.
   */
  async test(actor: Actor, id: string, message: string, variables?: Record<string, unknown> | null): Promise<MessageReply> {
    authorize(actor, 'agents.talk');
    const agent = await findAgent(this.em, actor, id);
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'An archived agent cannot be tested');
    this.checkModel(agent.modelConfig);
    const values = variablesOrRefuse(agent, { given: givenValues(variables) });
    const organization = await this.em.findOneOrFail(Organization, actor.organizationId, { fields: ['name'] });
    return this.responder.reply(agent, [], message, typedContext(agent, organization.name, values, null));
  }

  /** 400 naming each field of toolIds and mcpTools the organization's tools and servers do not back (tool-catalog.ts). */
  private async assertToolChoice(actor: Actor, choice: { toolIds: string[]; mcpTools: { serverId: string; names: string[] }[] }): Promise<void> {
    if (!this.tools || (choice.toolIds.length === 0 && choice.mcpTools.length === 0)) return;
    const errors = await this.tools.choiceErrors(actor.organizationId, choice);
    if (errors.length > 0) throw AppError.badInput(errors);
  }

  /** 409 naming the agent's tools when its model cannot call tools (builtin/extractive). */
  private async assertModelCallsTools(agent: Agent): Promise<void> {
    if (callsTools(agent.modelConfig.model) || !this.tools || (agent.toolIds.length === 0 && agent.mcpTools.length === 0)) return;
    const names = await this.tools.names(agent.organization.id, agent);
    throw new AppError(
      'CONFLICT',
      `The model ${agent.modelConfig.model} cannot call tools, and the agent lists ${names.join(', ')}: choose a model that can (builtin/echo offline, or a provider's) or take the tools off`,
      [{ field: 'modelConfig.model', message: `${agent.modelConfig.model} cannot call the agent's tools (${names.join(', ')})` }],
    );
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

/** A voice model its provider does not publish → 400 naming the field, the model and the accepted ones (voice-models.ts). */
function assertVoiceModels(model: string, voiceConfig: VoiceConfig | null | undefined): void {
  const problems = voiceModelProblems({ model, voiceConfig });
  if (problems.length > 0) throw AppError.badInput(problems);
}

function toMcpTools(input: { serverId: string; names: string[] }[] | undefined): { serverId: string; names: string[] }[] {
  return (input ?? []).map((entry) => ({ serverId: entry.serverId, names: [...new Set(entry.names)] }));
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
  const misplaced = Object.entries(PIPELINE_FIELDS).filter(
    ([field, mode]) => input[field as keyof typeof PIPELINE_FIELDS] !== undefined && input.pipelineMode !== mode,
  );
  if (misplaced.length > 0) {
    throw AppError.badInput(
      misplaced.map(([field, mode]) => ({
        field: `voiceConfig.${field}`,
        message: `${field} applies only to pipelineMode "${mode}" (this agent's is "${input.pipelineMode}")`,
      })),
    );
  }
  const streaming = input.pipelineMode === PipelineMode.streaming;
  return {
    ...voiceTurns(input),
    pipelineMode: input.pipelineMode,
    voiceId: input.voiceId ?? null,
    stsProvider: input.stsProvider ?? null,
    // A streaming agent names its recognizer and synthesizer; unset, the defaults are stored so every answer says what will speak.
    sttProvider: input.sttProvider ?? (streaming ? (DEFAULT_RECOGNIZER as SttProvider) : null),
    sttModel: input.sttModel ?? null,
    ttsProvider: input.ttsProvider ?? (streaming ? (DEFAULT_SYNTHESIZER as TtsProvider) : null),
    ttsModel: input.ttsModel ?? null,
    language: input.language ?? null,
  };
}

function toMemoryConfig(input: MemoryConfigInput | null | undefined): MemoryConfig | null {
  return input ? { enabled: input.enabled, lastMessages: input.lastMessages ?? DEFAULT_LAST_MESSAGES, semanticRecall: input.semanticRecall ?? null } : null;
}

function toKnowledgeBaseConfig(input: KnowledgeBaseConfigInput | null | undefined): KnowledgeBaseConfig | null {
  return input ? { knowledgeBaseId: input.knowledgeBaseId, topK: input.topK ?? 3, similarityThreshold: input.similarityThreshold ?? 0 } : null;
}

function toCriteria(input: ResolutionCriterionInput[] | undefined): ResolutionCriterion[] {
  return (input ?? []).map((criterion) => ({ label: criterion.label, description: criterion.description }));
}
