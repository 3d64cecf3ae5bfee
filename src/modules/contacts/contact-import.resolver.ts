import { Arg, Args, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, type Page } from '../../common/pagination.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { ContactImport } from './contact-import.entity.js';
import { CreateContactImportInput } from './contact-import.inputs.js';
import { ContactImportPage } from './contact-import.types.js';

@Resolver(() => ContactImport)
export class ContactImportResolver {
  @Query(() => ContactImportPage, { description: 'A page of the organization’s CSV imports, newest first (REST GET /api/imports)' })
  contactImports(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<ContactImport>> {
    return context.services.contactImports.list(actorOf(context), args);
  }

  @Query(() => ContactImport, { description: 'An import: status and counts (REST GET /api/imports/{id})' })
  contactImport(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<ContactImport> {
    return context.services.contactImports.get(actorOf(context), id);
  }

  @Mutation(() => ContactImport, {
    description:
      'A CSV import awaiting its file: PUT the CSV (text/csv) to its uploadUrl, and it runs in the background (REST POST /api/imports sends both at once)',
  })
  createContactImport(
    @Arg('input', () => CreateContactImportInput, { nullable: true }) input: CreateContactImportInput | null,
    @Ctx() context: GraphQLContext,
  ): Promise<ContactImport> {
    return context.services.contactImports.create(actorOf(context), input ?? new CreateContactImportInput());
  }

  @Mutation(() => ContactImport, {
    description:
      'Cancel a waiting or running import; a create import that wrote contacts answers cancelling while the worker deletes them (REST POST /api/imports/{id}/cancel)',
  })
  cancelContactImport(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<ContactImport> {
    return context.services.contactImports.cancel(actorOf(context), id);
  }

  @Mutation(() => ContactImport, { description: 'Continue a cancelled or failed upsert or skip import (REST POST /api/imports/{id}/resume)' })
  resumeContactImport(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<ContactImport> {
    return context.services.contactImports.resume(actorOf(context), id);
  }
}
