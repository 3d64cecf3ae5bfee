import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { Arg, Args, Ctx, Extensions, FieldResolver, ID, Info, Mutation, Query, Resolver, Root } from 'type-graphql';
import { SEARCH_COST } from '../../graphql/cost.js';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { DeletionResult } from '../auth/auth.types.js';
import { pageSelectionOf } from '../../graphql/look-ahead.js';
import { preloadedRelation } from '../../db/nested-relation.js';
import { baseDocuments } from './knowledge.service.js';
import { KnowledgeBase } from './knowledge-base.entity.js';
import { KnowledgeDocument } from './knowledge-document.entity.js';
import { AddDocumentInput, CreateKnowledgeBaseInput, DocumentListArgs, SearchKnowledgeBaseArgs } from './knowledge.inputs.js';
import { PageArgs, type Page } from '../../common/pagination.js';
import { KnowledgeBasePage, KnowledgeDocumentPage, KnowledgePassage } from './knowledge.types.js';
import { sqlList } from '../../graphql/sql-answers.js';

/** The selections of a field where a selection asks for it, looking through fragments (a leaf field gives an empty one). */
function selectionsOf(selectionSet: SelectionSetNode | undefined, name: string, info: GraphQLResolveInfo): (SelectionSetNode | undefined)[] {
  return (selectionSet?.selections ?? []).flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value === name ? [selection.selectionSet] : [];
    if (selection.kind === Kind.INLINE_FRAGMENT) return selectionsOf(selection.selectionSet, name, info);
    return selectionsOf(info.fragments[selection.name.value]?.selectionSet, name, info);
  });
}

/** Whether the field's selection asks for the document's `content`. */
function selectsContent(info: GraphQLResolveInfo): boolean {
  return info.fieldNodes.some((node) => selectionsOf(node.selectionSet, 'content', info).length > 0);
}

// The page as the database writes it, when the whole query can be (src/graphql/sql-answers.ts).
sqlList({
  field: 'knowledgeBases',
  entity: KnowledgeBase,
  args: PageArgs,
  read: (context, actor, args, row) => context.services.knowledge.listBasesJson(actor, args, row),
});

@Resolver(() => KnowledgeBase)
export class KnowledgeResolver {
  @Query(() => KnowledgeBasePage, { description: "A page of the organization's knowledge bases; search matches name or description" })
  async knowledgeBases(@Args(() => PageArgs) args: PageArgs, @Ctx() context: GraphQLContext, @Info() info: GraphQLResolveInfo): Promise<Page<KnowledgeBase>> {
    return context.services.knowledge.listBases(actorOf(context), args, await pageSelectionOf(info, KnowledgeBase));
  }

  @Query(() => KnowledgeBase)
  knowledgeBase(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<KnowledgeBase> {
    return context.services.knowledge.getBase(actorOf(context), id);
  }

  /** The text is read (and charged to the answer budget) only when the query selects it. */
  @Query(() => KnowledgeDocument, { description: 'A document with its full text' })
  document(
    @Arg('knowledgeBaseId', () => ID) knowledgeBaseId: string,
    @Arg('documentId', () => ID) documentId: string,
    @Ctx() context: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<KnowledgeDocument> {
    return context.services.knowledge.getDocument(actorOf(context), knowledgeBaseId, documentId, { withContent: selectsContent(info) });
  }

  @Query(() => [KnowledgePassage], { description: 'The passages an agent would retrieve for a query, best first' })
  @Extensions({ cost: { base: SEARCH_COST } })
  searchKnowledgeBase(@Args() args: SearchKnowledgeBaseArgs, @Ctx() context: GraphQLContext): Promise<KnowledgePassage[]> {
    const { id, query, topK, similarityThreshold } = args;
    return context.services.knowledge.search(actorOf(context), id, query, { topK, similarityThreshold });
  }

  @Mutation(() => KnowledgeBase)
  createKnowledgeBase(@Arg('input') input: CreateKnowledgeBaseInput, @Ctx() context: GraphQLContext): Promise<KnowledgeBase> {
    return context.services.knowledge.createBase(actorOf(context), input);
  }

  @Mutation(() => KnowledgeDocument, { description: 'Adds a document and chunks it for retrieval' })
  addDocument(
    @Arg('knowledgeBaseId', () => ID) knowledgeBaseId: string,
    @Arg('input') input: AddDocumentInput,
    @Ctx() context: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<KnowledgeDocument> {
    return context.services.knowledge.addDocument(actorOf(context), knowledgeBaseId, input, { withContent: selectsContent(info) });
  }

  @Mutation(() => DeletionResult, { description: 'Deletes a knowledge base with its documents and chunks' })
  deleteKnowledgeBase(@Arg('id', () => ID) id: string, @Ctx() context: GraphQLContext): Promise<DeletionResult> {
    return context.services.knowledge.deleteBase(actorOf(context), id);
  }

  /** Batched across bases; the text is loaded only when the query selects it. */
  @FieldResolver(() => KnowledgeDocumentPage, { description: 'Documents of the base, newest first, paged like GET /api/knowledge-bases/{id}/documents' })
  documents(
    @Root() base: KnowledgeBase,
    @Args() args: DocumentListArgs,
    @Ctx() context: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<Page<KnowledgeDocument>> {
    // Read with the knowledge bases page when its selection asked for them (look-ahead), else batched.
    const ready = preloadedRelation<Page<KnowledgeDocument>, DocumentListArgs>(base, baseDocuments, args);
    if (ready) return Promise.resolve(ready);
    const withContent = info.fieldNodes.some((node) =>
      selectionsOf(node.selectionSet, 'data', info).some((data) => selectionsOf(data, 'content', info).length > 0),
    );
    return loadersOf(context).knowledge.documentPage(base.id, args, withContent);
  }
}
