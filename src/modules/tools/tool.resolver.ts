import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { CursorPageArgs, PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from '../auth/auth.types.js';
import { Conversation } from '../agents/conversation.entity.js';
import { McpServer } from './mcp-server.entity.js';
import type { ToolCallRecord } from './tool-call.store.js';
import { Tool, ToolWithSecret } from './tool.entity.js';
import { CreateMcpServerInput, CreateToolInput, UpdateMcpServerInput, UpdateToolInput } from './tool.inputs.js';
import { McpServerPage, ToolCallPage, ToolPage } from './tool.types.js';

@Resolver(() => Tool)
export class ToolResolver {
  @Query(() => ToolPage, { description: 'A page of the organization’s HTTP tools; search matches the name or the description' })
  tools(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<Tool>> {
    return context.services.tools.list(actorOf(context), args);
  }

  @Query(() => Tool, { description: 'An HTTP tool of the organization (never its header values or secret)' })
  tool(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Tool> {
    return context.services.tools.get(actorOf(context), id);
  }

  @Mutation(() => ToolWithSecret, {
    description: 'Owner or admin only; the answer holds the signing secret, shown only here. Needs CREDENTIALS_KEY (CONFLICT otherwise)',
  })
  createTool(@Arg('input') input: CreateToolInput, @Ctx() context: GraphQLContext): Promise<ToolWithSecret> {
    return context.services.tools.create(actorOf(context), input);
  }

  @Mutation(() => Tool, { description: 'Owner or admin only; changes the fields sent' })
  updateTool(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateToolInput, @Ctx() context: GraphQLContext): Promise<Tool> {
    return context.services.tools.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner or admin only; CONFLICT naming the agents (not archived) that list it' })
  async deleteTool(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.tools.delete(actorOf(context), id);
    return { id, message: `Tool ${id} deleted` };
  }

  @Mutation(() => ToolWithSecret, {
    description: 'Owner or admin only; a new signing secret, shown only in this answer; the old one keeps signing alongside it for 24 hours',
  })
  rotateToolSecret(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<ToolWithSecret> {
    return context.services.tools.rotateSecret(actorOf(context), id);
  }
}

@Resolver(() => McpServer)
export class McpServerResolver {
  @Query(() => McpServerPage, { description: 'A page of the organization’s MCP servers with the tools each listed; search matches the name' })
  mcpServers(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<McpServer>> {
    return context.services.mcpServers.list(actorOf(context), args);
  }

  @Query(() => McpServer, { description: 'One MCP server of the organization, with the tools it listed; NOT_FOUND for another organization’s' })
  mcpServer(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<McpServer> {
    return context.services.mcpServers.get(actorOf(context), id);
  }

  @Mutation(() => McpServer, { description: 'Owner or admin only; lists its tools at once (a server that is down is kept, unavailable, with lastError)' })
  createMcpServer(@Arg('input') input: CreateMcpServerInput, @Ctx() context: GraphQLContext): Promise<McpServer> {
    return context.services.mcpServers.create(actorOf(context), input);
  }

  @Mutation(() => McpServer, { description: 'Owner or admin only; a new URL or auth lists its tools again' })
  updateMcpServer(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateMcpServerInput, @Ctx() context: GraphQLContext): Promise<McpServer> {
    return context.services.mcpServers.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Owner or admin only; agents that name it are simply offered none of its tools' })
  async deleteMcpServer(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.mcpServers.delete(actorOf(context), id);
    return { id, message: `MCP server ${id} deleted` };
  }

  @Mutation(() => McpServer, { description: 'Owner or admin only; lists the server’s tools again now' })
  refreshMcpServer(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<McpServer> {
    return context.services.mcpServers.refresh(actorOf(context), id);
  }
}

/** Conversation.toolCalls, added from the tools module (the agents module does not know it). */
@Resolver(() => Conversation)
export class ConversationToolCallsResolver {
  @FieldResolver(() => ToolCallPage, {
    description:
      'The tools the agent called, in order (afterSequence places each among the messages); paged like GET /api/conversations/{id}/tool-calls; batched across conversations',
  })
  toolCalls(@Root() conversation: Conversation, @Args() args: CursorPageArgs, @Ctx() context: GraphQLContext): Promise<Page<ToolCallRecord>> {
    return loadersOf(context).tools.toolCallPage(conversation.id, args);
  }
}
