import DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, Ctx, FieldResolver, ID, Info, Mutation, Query, Resolver, Root } from 'type-graphql';
import { preloadedRelation } from '../../db/nested-relation.js';
import { pageSelectionOf } from '../../graphql/look-ahead.js';
import { audienceMembers } from './audience.service.js';
import { PageArgs, type Page } from '../../common/pagination.js';
import { parseInput } from '../../common/validation.js';
import { DeletionResult } from '../auth/auth.types.js';
import { actorOf, type GraphQLContext } from '../../graphql/context.js';
import { Audience } from './audience.entity.js';
import { AudienceMembersInput, CreateAudienceInput, FILTER_DESCRIPTION, SegmentPreviewInput, UpdateAudienceInput } from './audience.inputs.js';
import type { Contact } from './contact.entity.js';
import { AudiencePage, ContactPage, SegmentPreview } from './contacts.types.js';

/** One member loader per request and page arguments, so `audiences { data { contacts } }` costs two statements. */
const memberLoaders = new WeakMap<GraphQLContext, Map<string, DataLoader<string, Page<Contact>>>>();

function memberLoader(context: GraphQLContext, args: PageArgs): DataLoader<string, Page<Contact>> {
  const loaders = memberLoaders.get(context) ?? new Map<string, DataLoader<string, Page<Contact>>>();
  memberLoaders.set(context, loaders);
  const key = JSON.stringify([args.page, args.limit, args.search, args.sortBy, args.sortOrder, args.cursor]);
  let loader = loaders.get(key);
  if (!loader) {
    loader = new DataLoader((ids) => context.services.audiences.membersOf(actorOf(context), ids, args));
    loaders.set(key, loader);
  }
  return loader;
}

@Resolver(() => Audience)
export class AudienceResolver {
  @Query(() => AudiencePage, { description: 'A page of audiences; search matches name or description' })
  async audiences(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<Page<Audience>> {
    return context.services.audiences.list(actorOf(context), args, await pageSelectionOf(info, Audience));
  }

  @Query(() => Audience)
  audience(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<Audience> {
    return context.services.audiences.get(actorOf(context), id);
  }

  @Query(() => SegmentPreview, {
    description:
      'How many contacts of the organization a segment filter matches now, before a segment is saved with it (the same validation and count as a saved one)',
  })
  async segmentPreview(
    @Arg('filter', () => GraphQLJSONObject, { description: `The filter to count, as a segment's. ${FILTER_DESCRIPTION}` }) filter: Record<string, unknown>,
    @Ctx() context: GraphQLContext,
  ): Promise<SegmentPreview> {
    // The REST body class validates the filter, so both doors answer the same 400s.
    const input = await parseInput(SegmentPreviewInput, { filter });
    return context.services.audiences.previewSegment(actorOf(context), input);
  }

  @FieldResolver(() => ContactPage, { description: 'A page of the members' })
  contacts(@Root() audience: Audience, @Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext): Promise<Page<Contact>> {
    // Read with the audiences page when its selection asked for them (look-ahead), else batched.
    const ready = preloadedRelation<Page<Contact>, PageArgs>(audience, audienceMembers, args);
    return ready ? Promise.resolve(ready) : memberLoader(context, args).load(audience.id);
  }

  @Mutation(() => Audience)
  createAudience(@Arg('input') input: CreateAudienceInput, @Ctx() context: GraphQLContext): Promise<Audience> {
    return context.services.audiences.create(actorOf(context), input);
  }

  @Mutation(() => Audience, { description: 'Changes only the fields that are sent' })
  updateAudience(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAudienceInput, @Ctx() context: GraphQLContext): Promise<Audience> {
    return context.services.audiences.update(actorOf(context), id, input);
  }

  @Mutation(() => DeletionResult, { description: 'Deletes the audience and its memberships (not the contacts)' })
  async deleteAudience(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    await context.services.audiences.delete(actorOf(context), id);
    return { id, message: `Audience ${id} deleted` };
  }

  @Mutation(() => Audience, { description: 'Adds contacts of the organization; members already in stay once' })
  async addAudienceMembers(
    @Arg('audienceId', () => ID) audienceId: string,
    @Arg('contactIds', () => [ID]) contactIds: string[],
    @Ctx() context: GraphQLContext,
  ): Promise<Audience> {
    // The REST body class validates the list, so both doors apply the same limits.
    const input = await parseInput(AudienceMembersInput, { contactIds });
    return context.services.audiences.addMembers(actorOf(context), audienceId, input);
  }

  @Mutation(() => Audience)
  async removeAudienceMembers(
    @Arg('audienceId', () => ID) audienceId: string,
    @Arg('contactIds', () => [ID]) contactIds: string[],
    @Ctx() context: GraphQLContext,
  ): Promise<Audience> {
    const input = await parseInput(AudienceMembersInput, { contactIds });
    return context.services.audiences.removeMembers(actorOf(context), audienceId, input);
  }
}
