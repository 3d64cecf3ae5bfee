import { Arg, Args, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Page } from '../../common/pagination.js';
import { CursorPageArgs } from '../../common/pagination.js';
import { SEARCH_COST } from '../../graphql/cost.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { ConversationListArgs, MessageArgs, StartConversationArgs } from './agent.args.js';
import { Agent } from './agent.entity.js';
import { ConversationPage, MessagePage } from './agent.pages.js';
import { MessageReply } from './agent.types.js';
import { Conversation } from './conversation.entity.js';
import type { Message } from './message.entity.js';

@Resolver(() => Conversation)
export class ConversationResolver {
  @Query(() => ConversationPage)
  conversations(@Arg('agentId', () => ID) agentId: string, @Args() args: ConversationListArgs, @Ctx() context: GraphQLContext): Promise<Page<Conversation>> {
    return context.services.conversations.list(actorOf(context), agentId, args);
  }

  @Query(() => Conversation)
  conversation(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Conversation> {
    return context.services.conversations.get(actorOf(context), id);
  }

  @Mutation(() => Conversation, { description: 'A new pending conversation with an agent' })
  startConversation(@Arg('agentId', () => ID) agentId: string, @Args() args: StartConversationArgs, @Ctx() context: GraphQLContext): Promise<Conversation> {
    return context.services.conversations.start(actorOf(context), agentId, args);
  }

  @Mutation(() => MessageReply, { description: 'Stores the message and the reply, in order' })
  @Extensions({ cost: { base: SEARCH_COST } }) // it may search the agent's knowledge base
  sendMessage(
    @Arg('conversationId', () => ID) conversationId: string,
    @Args() { message, variables }: MessageArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<MessageReply> {
    return context.services.conversations.sendMessage(actorOf(context), conversationId, message, variables);
  }

  @Mutation(() => Conversation, { description: 'Ends the conversation and evaluates its resolution criteria' })
  endConversation(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Conversation> {
    return context.services.conversations.end(actorOf(context), id);
  }

  @FieldResolver(() => MessagePage, { description: 'In order, paged like GET /api/conversations/{id}/messages; batched across conversations' })
  messages(@Root() conversation: Conversation, @Args() args: CursorPageArgs, @Ctx() context: GraphQLContext): Promise<Page<Message>> {
    return loadersOf(context).agents.messagePage(conversation.id, args);
  }

  @FieldResolver(() => Agent)
  agent(@Root() conversation: Conversation, @Ctx() context: GraphQLContext): Promise<Agent> {
    return loadersOf(context).agents.agents.load(conversation.agent.id);
  }
}
