import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Page } from '../../common/pagination.js';
import { DeletionResult } from '../auth/auth.types.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { BusinessEntity } from './business-entity.entity.js';
import { BusinessEntityListArgs, CreateBusinessEntityInput, UpdateBusinessEntityInput } from './business-entity.inputs.js';
import { Contact } from './contact.entity.js';
import { BusinessEntityPage } from './contacts.types.js';
import { sqlList } from '../../graphql/sql-answers.js';

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({
  field: 'businessEntities',
  entity: BusinessEntity,
  args: BusinessEntityListArgs,
  read: (context, actor, args, row) => context.services.businessEntities.listJson(actor, args, row),
});

@Resolver(() => BusinessEntity)
export class BusinessEntityResolver {
  @Query(() => BusinessEntityPage, { description: 'A page of business records; search matches name or type' })
  businessEntities(@Args(() => BusinessEntityListArgs) args: BusinessEntityListArgs, @Ctx() context: GraphQLContext): Promise<Page<BusinessEntity>> {
    return context.services.businessEntities.list(actorOf(context), args);
  }

  @Query(() => BusinessEntity)
  businessEntity(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<BusinessEntity> {
    return context.services.businessEntities.get(actorOf(context), id);
  }

  @Mutation(() => BusinessEntity)
  createBusinessEntity(@Arg('input') input: CreateBusinessEntityInput, @Ctx() context: GraphQLContext): Promise<BusinessEntity> {
    return context.services.businessEntities.create(actorOf(context), input);
  }

  @Mutation(() => BusinessEntity, { description: 'Changes only the fields that are sent' })
  updateBusinessEntity(
    @Arg('id', () => ID) id: string,
    @Arg('input') input: UpdateBusinessEntityInput,
    @Ctx() context: GraphQLContext,
  ): Promise<BusinessEntity> {
    return context.services.businessEntities.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult)
  async deleteBusinessEntity(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.businessEntities.delete(actorOf(context), id);
    return { id, message: `Entity ${id} deleted` };
  }
}

/** Adds Contact.entities without the contact module knowing about business records. */
@Resolver(() => Contact)
export class ContactEntitiesResolver {
  // The argument also keeps the field GraphQL-only: the REST door lists records at /api/business-entities?contactId=.
  @FieldResolver(() => [BusinessEntity], { description: 'The business records of the contact, oldest first' })
  entities(
    @Root() contact: Contact,
    @Arg('type', () => String, { nullable: true, description: 'Only records of this type' }) type: string | null | undefined,
    @Ctx() context: GraphQLContext,
  ): Promise<BusinessEntity[]> {
    return loadersOf(context).contacts.entities(contact.id, type);
  }
}
