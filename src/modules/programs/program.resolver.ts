import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Ctx, FieldResolver, ID, Info, Mutation, Query, Resolver, Root } from 'type-graphql';
import { CursorPageArgs, PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { pageSelectionOf } from '../../graphql/look-ahead.js';
import { Agent } from '../agents/agent.entity.js';
import { DeletionResult } from '../auth/auth.types.js';
import { Audience } from '../contacts/audience.entity.js';
import { CallFlow } from './call-flow.entity.js';
import { Execution } from './execution.entity.js';
import { Program } from './program.entity.js';
import { ExecutionStatus } from './program.enums.js';
import { CreateProgramInput, UpdateProgramInput } from './program.inputs.js';
import { ProgramPage } from './programs.types.js';

@Resolver(() => Program)
export class ProgramResolver {
  @Query(() => ProgramPage, { description: 'A page of programs; search matches name or description' })
  async programs(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<Page<Program>> {
    return context.services.programs.list(actorOf(context), args, await pageSelectionOf(info, Program));
  }

  @Query(() => Program)
  program(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Program> {
    return context.services.programs.get(actorOf(context), id);
  }

  @Mutation(() => Program, { description: 'Creates a draft' })
  createProgram(@Arg('input') input: CreateProgramInput, @Ctx() context: GraphQLContext): Promise<Program> {
    return context.services.programs.create(actorOf(context), input);
  }

  @Mutation(() => Program, {
    description:
      'Changes the fields that are sent; the result is checked as a whole, and an active program as activation checks it (a CONFLICT naming what is missing)',
  })
  updateProgram(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateProgramInput, @Ctx() context: GraphQLContext): Promise<Program> {
    return context.services.programs.update(actorOf(context), id, input);
  }

  @Mutation(() => Program, {
    description:
      'draft → active; any other state is a CONFLICT, and so is a program that cannot run (its carrier, its agents: active, their providers configured)',
  })
  activateProgram(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Program> {
    return context.services.programs.activate(actorOf(context), id);
  }

  @Mutation(() => DeletionResult, { description: 'Deletes the program and its executions; CONFLICT while one is not finished' })
  async deleteProgram(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.programs.delete(actorOf(context), id);
    return { id, message: `Program ${id} deleted` };
  }

  @FieldResolver(() => CallFlow, { nullable: true })
  flow(@Root() program: Program, @Ctx() context: GraphQLContext): Promise<CallFlow | null> | null {
    return program.flow ? loadersOf(context).programs.flows.load(program.flow.id) : null;
  }

  @FieldResolver(() => Agent, { nullable: true, description: 'The agent of a program without a flow' })
  agent(@Root() program: Program, @Ctx() context: GraphQLContext): Promise<Agent | null> | null {
    return program.agent ? loadersOf(context).programs.agents.load(program.agent.id) : null;
  }

  @FieldResolver(() => Audience, { nullable: true })
  audience(@Root() program: Program, @Ctx() context: GraphQLContext): Promise<Audience | null> | null {
    return program.audience ? loadersOf(context).programs.audiences.load(program.audience.id) : null;
  }

  @FieldResolver(() => [Execution], { description: 'Newest first, like GET /api/programs/{id}/executions; batched across programs' })
  async executions(
    @Root() program: Program,
    @Arg('status', () => ExecutionStatus, { nullable: true }) status: ExecutionStatus | null | undefined,
    @Args(() => CursorPageArgs) args: CursorPageArgs,
    @Ctx() context: GraphQLContext,
  ): Promise<Execution[]> {
    return loadersOf(context).programs.executions(program, { status, page: args.page, limit: args.limit, cursor: args.cursor ?? null });
  }
}
