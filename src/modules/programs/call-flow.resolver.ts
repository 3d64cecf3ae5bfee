import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from '../auth/auth.types.js';
import { createPageType, PageArgs, type Page } from '../../common/pagination.js';
import { CallFlow } from './call-flow.entity.js';
import { CreateCallFlowInput, UpdateCallFlowInput } from './call-flow.inputs.js';
import { sqlList } from '../../graphql/sql-answers.js';

export const CallFlowPage = createPageType(CallFlow, 'CallFlowPage');

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({ field: 'callFlows', entity: CallFlow, args: PageArgs, read: (context, actor, args, row) => context.services.callFlows.listJson(actor, args, row) });

@Resolver(() => CallFlow)
export class CallFlowResolver {
  @Query(() => CallFlowPage, { description: 'A page of the organization’s call flows; search matches name or description' })
  callFlows(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<CallFlow>> {
    return context.services.callFlows.list(actorOf(context), args);
  }

  @Query(() => CallFlow)
  callFlow(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<CallFlow> {
    return context.services.callFlows.get(actorOf(context), id);
  }

  @Mutation(() => CallFlow, { description: 'Nodes: 1 to 200, ids unique, exactly one start; edges between existing nodes' })
  createCallFlow(@Arg('input') input: CreateCallFlowInput, @Ctx() context: GraphQLContext): Promise<CallFlow> {
    return context.services.callFlows.create(actorOf(context), input);
  }

  @Mutation(() => CallFlow, {
    description: 'Changes the fields that are sent; a change that would leave an active program using the flow unable to run is a CONFLICT',
  })
  updateCallFlow(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateCallFlowInput, @Ctx() context: GraphQLContext): Promise<CallFlow> {
    return context.services.callFlows.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Programs that used the flow keep their record, without a flow' })
  async deleteCallFlow(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.callFlows.delete(actorOf(context), id);
    return { id, message: `Call flow ${id} deleted` };
  }
}
