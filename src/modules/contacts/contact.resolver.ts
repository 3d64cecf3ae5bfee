import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Ctx, ID, Info, Mutation, Query, Resolver } from 'type-graphql';
import { pageSelectionOf } from '../../graphql/look-ahead.js';
import { PageArgs, type Page } from '../../common/pagination.js';
import { DeletionResult } from '../auth/auth.types.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { Contact } from './contact.entity.js';
import { CreateContactInput, ImportContactsInput, UpdateContactInput } from './contact.inputs.js';
import { ContactPage, ImportContactsResult } from './contacts.types.js';
import { sqlList } from '../../graphql/sql-answers.js';

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({ field: 'contacts', entity: Contact, args: PageArgs, read: (context, actor, args, row) => context.services.contacts.listJson(actor, args, row) });

@Resolver(() => Contact)
export class ContactResolver {
  @Query(() => ContactPage, { description: 'A page of contacts; search matches name or phone' })
  async contacts(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<Page<Contact>> {
    return context.services.contacts.list(actorOf(context), args, await pageSelectionOf(info, Contact));
  }

  @Query(() => Contact)
  contact(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Contact> {
    return context.services.contacts.get(actorOf(context), id);
  }

  @Mutation(() => Contact)
  createContact(@Arg('input') input: CreateContactInput, @Ctx() context: GraphQLContext): Promise<Contact> {
    return context.services.contacts.create(actorOf(context), input);
  }

  @Mutation(() => Contact, { description: 'Changes only the fields that are sent' })
  updateContact(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateContactInput, @Ctx() context: GraphQLContext): Promise<Contact> {
    return context.services.contacts.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Deletes the contact and its audience memberships' })
  async deleteContact(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.contacts.delete(actorOf(context), id);
    return { id, message: `Contact ${id} deleted` };
  }

  @Mutation(() => ImportContactsResult, {
    description:
      'Writes every contact or, if any row is invalid or a phone is taken, none (REST POST /api/contacts/import); one import per organization at a time: another while one runs is a CONFLICT naming it',
  })
  importContacts(@Arg('input') input: ImportContactsInput, @Ctx() context: GraphQLContext): Promise<ImportContactsResult> {
    return context.services.contacts.import(actorOf(context), input);
  }
}
