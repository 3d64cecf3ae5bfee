import type { EntityManager } from '@mikro-orm/postgresql';
import { fixedOrderPage, sortedPage } from '../../db/keyset.js';
import { readList } from '../../db/read-model.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, pageMeta, sortField, type CursorPageArgs, type Page } from '../../common/pagination.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { isUuid } from '../../db/base.entity.js';
import { columnsToReadObject } from '../../db/read-model.js';
import { nestedRelation } from '../../db/nested-relation.js';
import { validArgs } from '../../common/validation.js';
import { ConversationListArgs, type StartConversationArgs } from './agent.args.js';
import { Organization } from '../organizations/organization.entity.js';
import { Agent } from './agent.entity.js';
import { AgentStatus, ConversationStatus, MessageRole } from './agent.enums.js';
import type { ChatMessage, KnowledgePort, ModelPort, ToolPort } from './agent.ports.js';
import type { ModelTool } from '../models/model.types.js';
import { AgentResponder } from './agent.responder.js';
import { findAgent } from './find-agent.js';
import type { CriterionOutcome, MessageReply } from './agent.types.js';
import { Conversation } from './conversation.entity.js';
import { Message } from './message.entity.js';
import { criterionPrompt, isMet, memoryWindow, redactPolicy, userLines } from './prompt.js';
import { EventWriter } from '../events/event-writer.js';
import { conversationPayload, messagePayload } from './agent.events.js';
import { authorize } from '../organizations/roles.js';
import { plansSomething } from './analysis/analysis-plan.js';
import { PENDING_ANALYSIS } from './analysis/analysis-worker.js';
import { Call } from '../telephony/call.entity.js';
import { contextFor, renderedPrompt } from './templates/call-context.js';
import { typedContext, variablesOrRefuse } from './templates/agent-templates.js';
import { givenValues } from './templates/template-values.js';
import { callContext, readCallSource } from './templates/call-context-reader.js';

const SORT_COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at', status: 'status' } as const;
const SORT_FIELDS = Object.keys(SORT_COLUMNS) as (keyof typeof SORT_COLUMNS)[];
const CLOSED = new Set([ConversationStatus.ended, ConversationStatus.failed, ConversationStatus.archived]);

/** The filter and order of an agent's conversations for `args`, on the table aliased `alias`. */
function conversationFilter(alias: string, organizationId: string, args: ConversationListArgs): { where: string; params: unknown[]; order: string } {
  const column = SORT_COLUMNS[sortField(args.sortBy, SORT_FIELDS)];
  const direction = args.sortOrder === 'asc' ? 'asc' : 'desc';
  const filters = [`${alias}.organization_id = ?`];
  const params: unknown[] = [organizationId];
  if (args.status) {
    filters.push(`${alias}.status = ?`);
    params.push(args.status);
  }
  if (args.search) {
    filters.push(`${alias}.title ilike ?`);
    params.push(containsPattern(args.search));
  }
  return { where: filters.join(' and '), params, order: `${alias}.${column} ${direction}, ${alias}.id ${direction}` };
}

/**
 * Agent.conversations: an agent's page of conversations, read with an agents page when its selection
 * asks for them (the agent_id, created_at index gives each agent's LIMIT), else batched by pagesFor.
 */
export const agentConversations = nestedRelation<ConversationListArgs>({
  parent: Agent,
  field: 'conversations',
  entity: Conversation,
  shape: 'page',
  argNames: ['page', 'limit', 'search', 'sortBy', 'sortOrder', 'status'],
  readArgs: (raw) => validArgs(ConversationListArgs, raw),
  source(parent, organizationId, args) {
    const { where, params, order } = conversationFilter('x', organizationId, args);
    return { from: 'from conversations x', where: `x.agent_id = ${parent}.id and ${where}`, params, order };
  },
  derived: { agent: ['agent'] },
});

/** Conversations of an agent and their messages; a message is answered by the agent's model. */
export class ConversationService {
  private readonly responder: AgentResponder;

  constructor(
    private readonly em: EntityManager,
    private readonly model: ModelPort,
    knowledge: KnowledgePort,
    /** Told when a call's conversation is left due for analysis (the analysis worker's nudge). */
    private readonly analysisDue: () => void = () => {},
    tools: ToolPort | null = null,
  ) {
    this.responder = new AgentResponder(model, knowledge, tools);
  }

  /**
   * A new pending conversation, with an optional title and values for the agent's variables (kept as
   * its context: 400 naming every variable with neither a value nor a default); an archived agent takes none (409).
   */
  async start(actor: Actor, agentId: string, args: StartConversationArgs = {}): Promise<Conversation> {
    authorize(actor, 'agents.talk');
    const agent = await findAgent(this.em, actor, agentId);
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'An archived agent cannot start conversations');
    const values = variablesOrRefuse(agent, { given: givenValues(args.variables) });
    const conversation = this.em.create(Conversation, { organization: agent.organization, agent, title: args.title ?? null });
    conversation.context = typedContext(agent, await this.organizationName(actor.organizationId), values, conversation.id);
    await this.em.flush();
    return conversation;
  }

  private async organizationName(organizationId: string): Promise<string> {
    return (await this.em.findOneOrFail(Organization, organizationId, { fields: ['name'] })).name;
  }

  /** A page of an agent's conversations (404 for an unknown agent). */
  async list(actor: Actor, agentId: string, args: ConversationListArgs): Promise<Page<Conversation>> {
    const agent = await findAgent(this.em, actor, agentId);
    // One agent's page: by the keyset (its cursors written), on the (agent, created_at) index.
    const field = sortField(args.sortBy, SORT_FIELDS);
    return readList(this.em, {
      entity: Conversation,
      where: {
        organization: actor.organizationId,
        agent: agent.id,
        ...(args.status ? { status: args.status } : {}),
        ...(args.search ? { title: { $ilike: containsPattern(args.search) } } : {}),
      } as never,
      options: sortedPage<Conversation>(args, field),
      page: args.page,
      limit: args.limit,
    });
  }

  /**
   * One page per agent in one statement, whatever the number of agents: the rows ranked by
   * row_number() within each agent, each carrying its agent's total (a page past the end: two).
   */
  async pagesFor(actor: Actor, agentIds: readonly string[], args: ConversationListArgs): Promise<Map<string, Page<Conversation>>> {
    if (args.cursor) {
      // A cursor belongs to one agent's list: each agent's page by its keyset.
      const pages = await Promise.all(agentIds.map(async (id) => [id, await this.list(actor, id, args)] as const));
      return new Map(pages);
    }
    const column = SORT_COLUMNS[sortField(args.sortBy, SORT_FIELDS)];
    const direction = args.sortOrder === 'asc' ? 'asc' : 'desc';
    const ids = agentIds.filter(isUuid);
    const pages = new Map(agentIds.map((id) => [id, { data: [] as Conversation[], meta: pageMeta(args.page, args.limit, 0) }]));
    if (ids.length === 0) return pages;
    const filters = ['organization_id = ?', `agent_id in (${ids.map(() => '?').join(', ')})`];
    const params: unknown[] = [actor.organizationId, ...ids];
    if (args.status) {
      filters.push('status = ?');
      params.push(args.status);
    }
    if (args.search) {
      filters.push('title ilike ?');
      params.push(containsPattern(args.search));
    }
    const where = filters.join(' and ');
    const offset = (args.page - 1) * args.limit;
    // The total of each agent rides on its rows (count over the partition); only an agent whose page
    // is past its last row needs the grouped count.
    const rows = await this.em.execute<Record<string, unknown>[]>(
      `select * from (select *, row_number() over (partition by agent_id order by ${column} ${direction}, id ${direction}) as position, ` +
        `count(*) over (partition by agent_id) as agent_total ` +
        `from conversations where ${where}) ranked where position > ? and position <= ? order by agent_id, position`,
      [...params, offset, offset + args.limit] as never[],
    );
    for (const row of rows) {
      const { position: _position, agent_total: total, ...columns } = row;
      const page = pages.get(String(row.agent_id))!;
      page.meta = pageMeta(args.page, args.limit, Number(total));
      page.data.push(columnsToReadObject(this.em, Conversation, columns));
    }
    const unseen = ids.filter((id) => pages.get(id)!.data.length === 0);
    if (offset > 0 && unseen.length > 0) {
      const totals = await this.em.execute<{ agent_id: string; total: number }[]>(
        `select agent_id, count(*)::int as total from conversations where ${where} group by agent_id`,
        params as never[],
      );
      for (const { agent_id: agentId, total } of totals) {
        if (unseen.includes(agentId)) pages.get(agentId)!.meta = pageMeta(args.page, args.limit, Number(total));
      }
    }
    return pages;
  }

  /** A conversation of the actor's organization, with its agent loaded. */
  async get(actor: Actor, id: string): Promise<Conversation> {
    const conversation = isUuid(id) ? await this.em.findOne(Conversation, { id, organization: actor.organizationId }, { populate: ['agent'] }) : null;
    if (!conversation) throw AppError.notFound('Conversation');
    return conversation;
  }

  /** Messages of several conversations in one statement, each list in order. */
  async messagesFor(actor: Actor, conversationIds: readonly string[]): Promise<Map<string, Message[]>> {
    const messages = await this.em.find(
      Message,
      { organization: actor.organizationId, conversation: { $in: conversationIds.filter(isUuid) } },
      { orderBy: { conversation: 'asc', sequence: 'asc' } },
    );
    const byConversation = new Map(conversationIds.map((id) => [id, [] as Message[]]));
    for (const message of messages) byConversation.get(message.conversation.id)?.push(message);
    return byConversation;
  }

  /** Agents by id in one statement (for Conversation.agent). */
  async agentsFor(actor: Actor, agentIds: readonly string[]): Promise<Map<string, Agent>> {
    const agents = await this.em.find(Agent, { organization: actor.organizationId, id: { $in: agentIds.filter(isUuid) } });
    return new Map(agents.map((agent) => [agent.id, agent]));
  }

  async messages(actor: Actor, conversation: Conversation): Promise<Message[]> {
    return (await this.messagesFor(actor, [conversation.id])).get(conversation.id)!;
  }

  /** A page of a conversation's messages, in order, by page or cursor (404 for a conversation that is not the actor's). */
  async messagePage(actor: Actor, conversationId: string, args: CursorPageArgs): Promise<Page<Message>> {
    const conversation = await this.get(actor, conversationId);
    return this.messageList(actor, conversation.id, args);
  }

  /** One conversation's page of messages by its keyset on (conversation_id, sequence, id), its cursors written. */
  private messageList(actor: Actor, conversationId: string, args: CursorPageArgs): Promise<Page<Message>> {
    return readList(this.em, {
      entity: Message,
      where: { organization: actor.organizationId, conversation: conversationId } as never,
      options: fixedOrderPage<Message>(args, 'sequence', 'asc'),
      page: args.page,
      limit: args.limit,
    });
  }

  /** A page of messages per conversation, in order, in one statement (GraphQL's Conversation.messages); a cursor's by its keyset. */
  async messagePagesFor(actor: Actor, conversationIds: readonly string[], args: CursorPageArgs): Promise<Map<string, Page<Message>>> {
    if (args.cursor) {
      // A cursor belongs to one conversation's list: each conversation's page by its keyset.
      const ids = conversationIds.filter(isUuid);
      const read = new Map(await Promise.all(ids.map(async (id) => [id, await this.messageList(actor, id, args)] as const)));
      return new Map(conversationIds.map((id) => [id, read.get(id) ?? { data: [], meta: pageMeta(args.page, args.limit, 0) }]));
    }
    return pagesByParent(this.em, conversationIds, {
      entity: Message,
      table: 'messages',
      parentColumn: 'conversation_id',
      columns: '*',
      orderBy: 'sequence asc, id asc',
      organizationId: actor.organizationId,
      page: args.page,
      limit: args.limit,
      keyset: { field: 'sequence', order: 'asc' },
    });
  }

  /** The last `count` messages of each conversation, in order, in one statement (what REST embeds). */
  async lastMessagesFor(actor: Actor, conversationIds: readonly string[], count: number): Promise<Map<string, Message[]>> {
    const pages = await pagesByParent(this.em, conversationIds, {
      entity: Message,
      table: 'messages',
      parentColumn: 'conversation_id',
      columns: '*',
      orderBy: 'sequence desc',
      organizationId: actor.organizationId,
      page: 1,
      limit: count,
    });
    return new Map([...pages].map(([id, page]) => [id, page.data.reverse()]));
  }

  /**
   * Stores the user message (its own flush), asks the model with the agent's memory and passages,
   * then stores the reply. When the model fails the user message stays and the error propagates.
   */
  async sendMessage(actor: Actor, conversationId: string, message: string, variables?: Record<string, unknown> | null): Promise<MessageReply> {
    authorize(actor, 'agents.talk');
    const conversation = await this.get(actor, conversationId);
    const given = givenValues(variables);
    if (Object.keys(given).length > 0 || !conversation.context) {
      // Values sent with a message join (or replace) the conversation's own, and are kept with it.
      const values = variablesOrRefuse(conversation.agent, { given: { ...conversation.context?.variables, ...given } });
      conversation.context = conversation.context
        ? { ...conversation.context, variables: values }
        : typedContext(conversation.agent, await this.organizationName(actor.organizationId), values, conversation.id);
      await this.em.flush();
    }
    return this.turn(conversation, conversation.agent, message);
  }

  /**
   * One turn: the user message stored (its own flush), the model asked with the agent's memory and
   * passages, the reply stored with its usage. When the model fails the user message stays and the
   * error propagates. A phone call passes the agent of the node it is on; typed messages the conversation's.
   */
  private async turn(conversation: Conversation, agent: Agent, message: string, callTools?: (agent: Agent) => ModelTool[]): Promise<MessageReply> {
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'The agent of this conversation is archived');
    if (CLOSED.has(conversation.status)) throw new AppError('CONFLICT', `The conversation is ${conversation.status}`);
    this.model.assertModelConfig(agent.modelConfig);
    const window = memoryWindow(agent.memoryConfig);
    const earlier = window > 0 ? await this.em.find(Message, { conversation }, { orderBy: { sequence: 'desc' }, limit: window }) : [];
    const history: ChatMessage[] = earlier.reverse().map((item) => ({ role: item.role, content: item.content }));

    await this.storeMessage(conversation, MessageRole.user, message);
    const reply = await this.responder.reply(
      agent,
      history,
      message,
      contextFor(agent, conversation.context),
      {
        conversationId: conversation.id,
        callId: conversation.callId,
      },
      callTools?.(agent) ?? [],
    );
    await this.storeMessage(conversation, MessageRole.assistant, reply.response, reply.usage);
    return reply;
  }

  // The phone's side: the voice engine talks for the caller, who has no actor; the call names the organization.

  /** A conversation for a phone call, with the agent that answers it first, and what the call's templates are rendered from. */
  async openForCall(organizationId: string, agentId: string, callId: string): Promise<Conversation> {
    const agent = await this.em.findOneOrFail(Agent, { id: agentId, organization: organizationId });
    const conversation = this.em.create(Conversation, { organization: agent.organization, agent, title: 'Phone call', callId });
    const source = await readCallSource(this.em, organizationId, callId);
    conversation.context = source ? callContext(source, agent, conversation.id) : null;
    await this.em.flush();
    return conversation;
  }

  /** One caller turn on a call, answered by `agentId` through the same path as typed messages; `callTools`: the call's own tools for that agent (a batch call's, batch-call-tools.ts). */
  async replyOnCall(
    organizationId: string,
    conversationId: string,
    agentId: string,
    message: string,
    callTools?: (agent: Agent) => ModelTool[],
  ): Promise<MessageReply> {
    const conversation = await this.em.findOneOrFail(Conversation, { id: conversationId, organization: organizationId }, { populate: ['agent'] });
    const agent = agentId === conversation.agent.id ? conversation.agent : await this.em.findOneOrFail(Agent, { id: agentId, organization: organizationId });
    return this.turn(conversation, agent, message, callTools);
  }

  /**
   * What the call's flow said (its `say` lines and `ask` prompts), stored as the agent's messages in
   * the order heard, so the transcript is the whole call and not only the agent's replies.
   */
  async addSpokenOnCall(organizationId: string, conversationId: string, lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return;
    const conversation = await this.em.findOneOrFail(Conversation, { id: conversationId, organization: organizationId }, { populate: ['agent'] });
    if (CLOSED.has(conversation.status)) return;
    for (const line of lines) await this.storeMessage(conversation, MessageRole.assistant, line.slice(0, 10_000));
  }

  /** Whether the conversation so far meets every resolution criterion of its agent (null: it has none). */
  async resolvedOnCall(organizationId: string, conversationId: string): Promise<boolean | null> {
    const conversation = await this.em.findOneOrFail(Conversation, { id: conversationId, organization: organizationId }, { populate: ['agent'] });
    if (conversation.agent.resolutionCriteria.length === 0) return null;
    return (await this.judge(conversation)).every((item) => item.met);
  }

  /** The call ended: the conversation ends as a typed one does (criteria judged), or fails when the call failed. */
  async closeForCall(organizationId: string, conversationId: string, failed: boolean): Promise<void> {
    const conversation = await this.em.findOne(Conversation, { id: conversationId, organization: organizationId }, { populate: ['agent'] });
    if (!conversation || CLOSED.has(conversation.status)) return;
    conversation.outcome = failed ? null : await this.judge(conversation);
    conversation.status = failed ? ConversationStatus.failed : ConversationStatus.ended;
    conversation.endedAt = new Date();
    // Marked due with the end itself (the same flush), so a restart before the analysis loses nothing.
    const analyze = !failed && plansSomething(conversation.agent.analysisPlan);
    if (analyze) {
      conversation.analysis = PENDING_ANALYSIS;
      conversation.analysisDueAt = conversation.endedAt;
      const call = conversation.callId ? await this.em.findOne(Call, { id: conversation.callId, organization: organizationId }) : null;
      if (call) call.analysis = PENDING_ANALYSIS;
    }
    EventWriter.stage(this.em, { organizationId, type: 'conversation.ended', payload: conversationPayload(conversation) });
    await this.em.flush();
    if (analyze) this.analysisDue();
  }

  /**
   * Ends a conversation and records, per resolution criterion, whether the model judges it met.
   * Judging talks to the agent, so an archived agent's conversation is 409, as for a message.
   */
  async end(actor: Actor, id: string): Promise<Conversation> {
    authorize(actor, 'agents.talk');
    const conversation = await this.get(actor, id);
    const agent = conversation.agent;
    if (agent.status === AgentStatus.archived) throw new AppError('CONFLICT', 'The agent of this conversation is archived');
    if (CLOSED.has(conversation.status)) throw new AppError('CONFLICT', `The conversation is already ${conversation.status}`);
    const outcome = await this.judge(conversation);
    conversation.status = ConversationStatus.ended;
    conversation.endedAt = new Date();
    conversation.outcome = outcome;
    EventWriter.stage(this.em, { organizationId: actor.organizationId, type: 'conversation.ended', payload: conversationPayload(conversation) });
    await this.em.flush();
    return conversation;
  }

  /** Per resolution criterion of the conversation's agent, whether the model judges the transcript meets it. */
  private async judge(conversation: Conversation): Promise<CriterionOutcome[]> {
    const agent = conversation.agent;
    const messages = await this.em.find(Message, { conversation }, { orderBy: { sequence: 'asc' } });
    const transcript: ChatMessage[] = messages.map((item) => ({ role: item.role, content: item.content }));
    const outcome: CriterionOutcome[] = [];
    for (const criterion of agent.resolutionCriteria) {
      const result = await this.model.generate({
        model: agent.modelConfig.model,
        ...criterionPrompt(criterion, transcript),
        settings: agent.modelConfig.modelSettings ?? null,
        providerOptions: agent.modelConfig.providerOptions ?? null,
      });
      outcome.push({
        label: criterion.label,
        met: isMet(result.text),
        explanation: redactPolicy(result.text, renderedPrompt(agent, conversation.context).guardPolicy, userLines(transcript)),
      });
    }
    return outcome;
  }

  /**
   * Takes the next sequence number from the row, in the transaction of the insert: overlapping
   * messages to one conversation each get their own (a count read before the model call would not).
   * A user message makes a pending conversation active.
   */
  private async storeMessage(conversation: Conversation, role: MessageRole, content: string, usage: Message['usage'] = null): Promise<void> {
    const activate = role === MessageRole.user ? `, status = case when status = 'pending' then 'active' else status end` : '';
    await this.em.transactional(async (tx) => {
      const [row] = await tx.execute<{ message_count: number }[]>(
        `update conversations set message_count = message_count + 1, updated_at = now()${activate} where id = ? returning message_count`,
        [conversation.id],
      );
      const stored = tx.create(Message, {
        organization: tx.getReference(Organization, conversation.organization.id),
        conversation: tx.getReference(Conversation, conversation.id),
        sequence: Number(row!.message_count),
        role,
        content,
        usage,
        model: usage?.model ?? null,
      });
      EventWriter.stage(tx, {
        organizationId: conversation.organization.id,
        type: 'conversation.message',
        payload: messagePayload(stored, conversation.agent.id),
      });
    });
  }
}
