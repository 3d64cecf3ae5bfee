import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { actorOf, loadersOf, type GraphQLContext } from '../../../graphql/context.js';
import { ContactTrigger } from '../contact-trigger.entity.js';
import { Program } from '../program.entity.js';
import { TriggerListArgs } from './trigger.args.js';
import { TriggerSync } from './trigger.types.js';

@Resolver(() => ContactTrigger)
export class TriggerResolver {
  @Query(() => [ContactTrigger], { description: "A live program's triggers by triggerAt, like GET /api/programs/{id}/triggers; [] for a campaign" })
  triggers(@Arg('programId', () => ID) programId: string, @Args() args: TriggerListArgs, @Ctx() context: GraphQLContext): Promise<ContactTrigger[]> {
    return context.services.triggers.list(actorOf(context), programId, args.status);
  }

  @Mutation(() => TriggerSync, { description: "Brings a live program's triggers in line with its audience and contacts now" })
  syncProgramTriggers(@Arg('programId', () => ID) programId: string, @Ctx() context: GraphQLContext): Promise<TriggerSync> {
    return context.services.triggers.sync(actorOf(context), programId);
  }
}

/** Extends the programs module's type with its triggers, without that module importing this one. */
@Resolver(() => Program)
export class ProgramTriggersResolver {
  @FieldResolver(() => [ContactTrigger], { description: 'Like GET /api/programs/{id}/triggers; batched across programs' })
  triggers(@Root() program: Program, @Args() args: TriggerListArgs, @Ctx() context: GraphQLContext): Promise<ContactTrigger[]> {
    return loadersOf(context).triggers.forProgram(program.id, args.status);
  }
}
