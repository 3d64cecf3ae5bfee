import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { actorOf, loadersOf, type GraphQLContext } from '../../../graphql/context.js';
import { ContactTrigger } from '../contact-trigger.entity.js';
import { Program } from '../program.entity.js';
import { TriggerListArgs } from './trigger.args.js';
import { programTriggers } from './trigger.service.js';
import { preloadedRelation } from '../../../db/nested-relation.js';
import { TriggerSync } from './trigger.types.js';
import { createPageType, type Page } from '../../../common/pagination.js';

export const ContactTriggerPage = createPageType(ContactTrigger, 'ContactTriggerPage');

@Resolver(() => ContactTrigger)
export class TriggerResolver {
  @Query(() => [ContactTrigger], {
    description: "A page of a live program's triggers by triggerAt, like GET /api/programs/{programId}/triggers; [] for a campaign",
  })
  async triggers(@Arg('programId', () => ID) programId: string, @Args() args: TriggerListArgs, @Ctx() context: GraphQLContext): Promise<ContactTrigger[]> {
    return (await context.services.triggers.list(actorOf(context), programId, args)).data;
  }

  @Query(() => ContactTriggerPage, {
    description: 'The page `triggers` answers, with its meta: the total and the cursors to walk the list by (as REST’s X-Total-Count, Link and X-Next-Cursor)',
  })
  triggerPage(@Arg('programId', () => ID) programId: string, @Args() args: TriggerListArgs, @Ctx() context: GraphQLContext): Promise<Page<ContactTrigger>> {
    return context.services.triggers.list(actorOf(context), programId, args);
  }

  @Mutation(() => TriggerSync, { description: "Brings a live program's triggers in line with its audience and contacts now" })
  syncProgramTriggers(@Arg('programId', () => ID) programId: string, @Ctx() context: GraphQLContext): Promise<TriggerSync> {
    return context.services.triggers.sync(actorOf(context), programId);
  }
}

/** Extends the programs module's type with its triggers, without that module importing this one. */
@Resolver(() => Program)
export class ProgramTriggersResolver {
  @FieldResolver(() => [ContactTrigger], { description: 'A page, like GET /api/programs/{programId}/triggers; batched across programs' })
  async triggers(@Root() program: Program, @Args() args: TriggerListArgs, @Ctx() context: GraphQLContext): Promise<ContactTrigger[]> {
    // Read with the programs page when its selection asked for them (look-ahead), else batched.
    return (
      preloadedRelation<ContactTrigger[], TriggerListArgs>(program, programTriggers, args) ??
      (await loadersOf(context).triggers.forProgram(program.id, args)).data
    );
  }
}
