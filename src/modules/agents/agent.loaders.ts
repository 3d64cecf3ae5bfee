import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import type { CursorPageArgs, Page } from '../../common/pagination.js';
import type { ConversationListArgs } from './agent.args.js';
import type { Agent } from './agent.entity.js';
import type { Conversation } from './conversation.entity.js';
import { agentConversations, type ConversationService } from './conversation.service.js';
import { preloadedRelation, relationKey } from '../../db/nested-relation.js';
import type { Message } from './message.entity.js';

/** Per-request batches for the relations of Agent and Conversation: a fixed number of statements per nested field. */
export class AgentLoaders {
  /** One loader per distinct argument set, since a page depends on page, limit, sort and filters. */
  private readonly pages = new Map<string, DataLoader<string, Page<Conversation>>>();
  private readonly messagePages = new Map<string, DataLoader<string, Page<Message>>>();
  readonly agents: DataLoader<string, Agent>;

  constructor(
    private readonly conversations: ConversationService,
    private readonly actor: Actor,
  ) {
    this.agents = new DataLoader<string, Agent>(async (ids) => {
      const byId = await conversations.agentsFor(actor, ids);
      return ids.map((id) => byId.get(id) ?? AppError.notFound('Agent'));
    });
  }

  messagePage(conversationId: string, args: CursorPageArgs): Promise<Page<Message>> {
    const key = JSON.stringify([args.page, args.limit, args.cursor ?? null]);
    let loader = this.messagePages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const pages = await this.conversations.messagePagesFor(this.actor, ids, args);
        return ids.map((id) => pages.get(id)!);
      });
      this.messagePages.set(key, loader);
    }
    return loader.load(conversationId);
  }

  /** An agent's page of conversations: read with the agents page when it asked for them (AgentService.list), else batched. */
  conversationPage(agent: Agent, args: ConversationListArgs): Promise<Page<Conversation>> {
    const ready = preloadedRelation<Page<Conversation>, ConversationListArgs>(agent, agentConversations, args);
    if (ready) return Promise.resolve(ready);
    const key = relationKey(agentConversations, args);
    let loader = this.pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const pages = await this.conversations.pagesFor(this.actor, ids, args);
        return ids.map((id) => pages.get(id)!);
      });
      this.pages.set(key, loader);
    }
    return loader.load(agent.id);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    agents: AgentLoaders;
  }
}
