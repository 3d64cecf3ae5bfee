import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { DoNotCallEntry } from './do-not-call.entity.js';
import { AddDoNotCallInput, ImportDoNotCallInput } from './do-not-call.inputs.js';
import { DoNotCallImportResult, DoNotCallPage } from './do-not-call.types.js';
import { sqlList } from '../../graphql/sql-answers.js';

const ID_OR_NUMBER = 'The entry’s id, or its number in E.164 (for example +14155550100)';

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({
  field: 'doNotCallEntries',
  entity: DoNotCallEntry,
  args: PageArgs,
  read: (context, actor, args, row) => context.services.doNotCall.listJson(actor, args, row),
});

@Resolver(() => DoNotCallEntry)
export class DoNotCallResolver {
  @Query(() => DoNotCallPage, { description: 'A page of the do-not-call list (REST GET /api/do-not-call); search matches the number or the note' })
  doNotCallEntries(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<DoNotCallEntry>> {
    return context.services.doNotCall.list(actorOf(context), args);
  }

  @Query(() => DoNotCallEntry, { description: 'An entry by its id or its number (E.164); one not on the list is NOT_FOUND (REST GET /api/do-not-call/{id})' })
  doNotCallEntry(@Arg('id', () => ID, { description: ID_OR_NUMBER }) id: string, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.get(actorOf(context), id);
  }

  @Mutation(() => DoNotCallEntry, { description: 'Put a number on the do-not-call list (source manual); a number already on it is a CONFLICT' })
  addDoNotCall(@Arg('input') input: AddDoNotCallInput, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.add(actorOf(context), input);
  }

  @Mutation(() => DoNotCallEntry, {
    description: 'Take a number off the list by the entry’s id or the number (answers the entry removed); one not on the list is NOT_FOUND',
  })
  removeDoNotCall(@Arg('id', () => ID, { description: ID_OR_NUMBER }) id: string, @Ctx() context: GraphQLContext): Promise<DoNotCallEntry> {
    return context.services.doNotCall.remove(actorOf(context), id);
  }

  @Mutation(() => DoNotCallImportResult, {
    description:
      'Add the numbers of a CSV (source import): good rows added, bad rows reported with their line and reason, repeats merged (REST POST /api/do-not-call/import); one import per organization at a time: another while one runs is a CONFLICT naming it',
  })
  importDoNotCall(@Arg('input') input: ImportDoNotCallInput, @Ctx() context: GraphQLContext): Promise<DoNotCallImportResult> {
    return context.services.doNotCall.import(actorOf(context), input);
  }
}
