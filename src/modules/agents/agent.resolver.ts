import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Ctx, Extensions, FieldResolver, ID, Info, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Page } from '../../common/pagination.js';
import { SEARCH_COST } from '../../graphql/cost.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { pageSelectionOf } from '../../graphql/look-ahead.js';
import { sqlList } from '../../graphql/sql-answers.js';
import { AgentListArgs, ConversationListArgs, MessageArgs } from './agent.args.js';
import { Agent } from './agent.entity.js';
import { CreateAgentInput } from './agent.inputs.js';
import { AgentPage, ConversationPage } from './agent.pages.js';
import { MessageReply } from './agent.types.js';
import type { Conversation } from './conversation.entity.js';
import { UpdateAgentInput } from './update-agent.inputs.js';

// The agents page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({ field: 'agents', entity: Agent, args: AgentListArgs, read: (context, actor, args, row) => context.services.agents.listJson(actor, args, row) });

@Resolver(() => Agent)
export class AgentResolver {
  @Query(() => Agent)
  agent(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Agent> {
    return context.services.agents.get(actorOf(context), id);
  }

  @Query(() => AgentPage, { description: 'Archived agents are left out unless status is archived' })
  async agents(@Args() args: AgentListArgs, @Ctx() context: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<Page<Agent>> {
    return context.services.agents.list(actorOf(context), args, await pageSelectionOf(info, Agent));
  }

  @Mutation(() => Agent, { description: 'Creates a draft at version 1' })
  createAgent(@Arg('input') input: CreateAgentInput, @Ctx() context: GraphQLContext): Promise<Agent> {
    return context.services.agents.create(actorOf(context), input);
  }

  @Mutation(() => Agent, {
    description:
      'Changes the fields that are sent; adds one to the version. A change of the model or voice that would leave an active program unable to run is a CONFLICT',
  })
  updateAgent(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAgentInput, @Ctx() context: GraphQLContext): Promise<Agent> {
    return context.services.agents.update(actorOf(context), id, input);
  }

  @Mutation(() => Agent, { description: 'draft → active; any other state is a CONFLICT' })
  activateAgent(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Agent> {
    return context.services.agents.activate(actorOf(context), id);
  }

  @Mutation(() => Agent, {
    description: 'Soft delete: the agent is archived and keeps its record; a CONFLICT naming the active programs and numbers that still call through it',
  })
  deleteAgent(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Agent> {
    return context.services.agents.delete(actorOf(context), id);
  }

  @Mutation(() => MessageReply, { description: 'One message to the agent; nothing is stored' })
  @Extensions({ cost: { base: SEARCH_COST } }) // it may search the agent's knowledge base
  testAgent(@Arg('id', () => ID) id: string, @Args() { message, variables }: MessageArgs, @Ctx() context: GraphQLContext): Promise<MessageReply> {
    return context.services.agents.test(actorOf(context), id, message, variables);
  }

  @FieldResolver(() => ConversationPage, { description: 'Paged like GET /api/agents/{id}/conversations; batched across agents' })
  conversations(@Root() agent: Agent, @Args() args: ConversationListArgs, @Ctx() context: GraphQLContext): Promise<Page<Conversation>> {
    return loadersOf(context).agents.conversationPage(agent, args);
  }
}
