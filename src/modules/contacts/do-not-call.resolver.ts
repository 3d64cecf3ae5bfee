import { Arg, Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { DoNotCallEntry } from './do-not-call.entity.js';
import { AddDoNotCallInput, ImportDoNotCallInput } from './do-not-call.inputs.js';
import { DoNotCallImportResult, DoNotCallPage } from './do-not-call.types.js';

@Resolver(() => DoNotCallEntry)
export class DoNotCallResolver {
  @Query(() => DoNotCallPage, { description: 'A page of the do-not-call list (REST GET /api/do-not-call); search matches the number or the note' })
  doNotCallEntries(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<DoNotCallEntry>> {
    return context.services.doNotCall.list(actorOf(context), args);
  }

  @Query(() => DoNotCallEntry, { description: 'The entry of a number (E.164); a number not on the list is NOT_FOUND' })
  doNotCallEntry(@Arg('phone', { description: 'E.164, for example +14155550100' }) phone: string, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.get(actorOf(context), phone);
  }

  @Mutation(() => DoNotCallEntry, { description: 'Put a number on the do-not-call list (source manual); a number already on it is a CONFLICT' })
  addDoNotCall(@Arg('input') input: AddDoNotCallInput, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.add(actorOf(context), input);
  }

  @Mutation(() => DoNotCallEntry, { description: 'Take a number off the list (answers the entry removed); a number not on the list is NOT_FOUND' })
  removeDoNotCall(@Arg('phone', { description: 'E.164, for example +14155550100' }) phone: string, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.remove(actorOf(context), phone);
  }

  @Mutation(() => DoNotCallImportResult, { description: 'Add the numbers of a CSV (source import): good rows added, bad rows reported with their line and reason, repeats merged (REST POST /api/do-not-call/import)' })
  importDoNotCall(@Arg('input') input: ImportDoNotCallInput, @Ctx() context: GraphQLContext): Promise<DoNotCallImportResult> {
    return context.services.doNotCall.import(actorOf(context), input);
  }
}
