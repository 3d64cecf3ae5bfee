import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AppError } from '../../common/errors.js';
import { createPageType, CursorPageArgs, type Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { Audience } from '../contacts/audience.entity.js';
import { Execution } from './execution.entity.js';
import { Program } from './program.entity.js';
import { CreateExecutionInput } from './program.inputs.js';
import { ExecutionAction } from './programs.types.js';

export const ExecutionPage = createPageType(Execution, 'ExecutionPage');

@Resolver(() => Execution)
export class ExecutionResolver {
  @Query(() => [Execution], { description: 'A page of the program’s executions, newest first, as GET /api/programs/{programId}/executions answers it' })
  async executions(
    @Arg('programId', () => ID) programId: string,
    @Args(() => CursorPageArgs) args: CursorPageArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<Execution[]> {
    return (await context.services.executions.listForProgram(actorOf(context), programId, args)).data;
  }

  @Query(() => ExecutionPage, {
    description:
      'The page `executions` answers, with its meta: the total and the cursors to walk the list by (as REST’s X-Total-Count, Link and X-Next-Cursor)',
  })
  executionPage(
    @Arg('programId', () => ID) programId: string,
    @Args(() => CursorPageArgs) args: CursorPageArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<Page<Execution>> {
    return context.services.executions.listForProgram(actorOf(context), programId, args);
  }

  @Query(() => Execution)
  execution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.get(actorOf(context), id);
  }

  @Mutation(() => Execution, {
    description:
      'A scheduled execution of an active campaign over its audience’s contacts that have not opted out (REST POST /api/programs/{programId}/executions)',
  })
  createExecution(
    @Arg('programId', () => ID) programId: string,
    @Arg('input', () => CreateExecutionInput, { nullable: true }) input: CreateExecutionInput | null | undefined,
    @Ctx() context: GraphQLContext,
  ): Promise<Execution> {
    return context.services.executions.create(actorOf(context), programId, input ?? {});
  }

  @Mutation(() => Execution, { description: 'start | pause | resume | stop | cancel; a move the state machine forbids is a CONFLICT' })
  controlExecution(
    @Arg('id', () => ID) id: string,
    @Arg('action', () => ExecutionAction) action: ExecutionAction,
    @Ctx() context: GraphQLContext,
  ): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, action);
  }

  @Mutation(() => Execution, { description: 'scheduled → running (REST POST /api/executions/{id}/start)' })
  startExecution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, 'start');
  }

  @Mutation(() => Execution, { description: 'running → paused' })
  pauseExecution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, 'pause');
  }

  @Mutation(() => Execution, { description: 'any paused state → running' })
  resumeExecution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, 'resume');
  }

  @Mutation(() => Execution, { description: 'running or paused → stopped; pending contacts are never dialed' })
  stopExecution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, 'stop');
  }

  @Mutation(() => Execution, { description: 'scheduled → cancelled' })
  cancelExecution(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Execution> {
    return context.services.executions.control(actorOf(context), id, 'cancel');
  }

  @FieldResolver(() => Program)
  async program(@Root() execution: Execution, @Ctx() context: GraphQLContext): Promise<Program> {
    const program = await loadersOf(context).programs.programs.load(execution.program.id);
    if (!program) throw AppError.notFound('Program');
    return program;
  }

  @FieldResolver(() => Audience, { nullable: true, description: 'The audience the execution was started over, while it exists' })
  audience(@Root() execution: Execution, @Ctx() context: GraphQLContext): Promise<Audience | null> | null {
    return execution.audienceId ? loadersOf(context).programs.audiences.load(execution.audienceId) : null;
  }
}
