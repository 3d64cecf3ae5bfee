import { Extensions, Field, Float, ID, ObjectType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import { LARGE_VALUE } from '../../platform/answer-budget.js';
import { KnowledgeBase } from './knowledge-base.entity.js';
import { KnowledgeDocument } from './knowledge-document.entity.js';
import type { Passage } from './knowledge.service.js';

@ObjectType({ description: 'A passage of a document found by a knowledge base search' })
export class KnowledgePassage implements Passage {
  @Field(() => ID)
  chunkId!: string;

  @Field(() => ID)
  documentId!: string;

  @Field({ description: 'Title of the document the passage comes from' })
  title!: string;

  @Field()
  @Extensions(LARGE_VALUE)
  content!: string;

  @Field(() => Float, { description: 'Full-text relevance from 0 to 1' })
  score!: number;
}

export const KnowledgeDocumentPage = createPageType(KnowledgeDocument, 'KnowledgeDocumentPage');
export const KnowledgeBasePage = createPageType(KnowledgeBase, 'KnowledgeBasePage');
