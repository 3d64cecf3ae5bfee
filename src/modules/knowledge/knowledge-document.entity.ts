import type { Opt } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { KnowledgeBase } from './knowledge-base.entity.js';

export const DOCUMENT_CONTENT_TYPES = ['text/plain', 'text/markdown'] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];

/**
 * The content types as a GraphQL enum. A media type is not a GraphQL name, so GraphQL says
 * `text_plain` / `text_markdown` where REST says `text/plain` / `text/markdown` (the stored value).
 */
export const DocumentContentTypeEnum = { text_plain: 'text/plain', text_markdown: 'text/markdown' } as const;
registerEnumType(DocumentContentTypeEnum, {
  name: 'DocumentContentType',
  description: 'The format of a document’s text (REST spells it as the media type: text/plain, text/markdown)',
  valuesConfig: {
    text_plain: { description: 'Plain text (text/plain)' },
    text_markdown: { description: 'Markdown (text/markdown); cut into passages like plain text' },
  },
});

export enum KnowledgeDocumentStatus {
  processing = 'processing',
  ready = 'ready',
  failed = 'failed',
}
registerEnumType(KnowledgeDocumentStatus, {
  name: 'KnowledgeDocumentStatus',
  description: 'processing while it is chunked, then ready, or failed with an error',
  valuesConfig: {
    processing: { description: 'Being cut into passages' },
    ready: { description: 'Its passages can be retrieved' },
    failed: { description: 'Could not be processed' },
  },
});

/** A document of a knowledge base; its text is cut into chunks for retrieval. */
@ObjectType({ description: 'A document of a knowledge base' })
@Entity({ tableName: 'knowledge_documents' })
export class KnowledgeDocument extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => KnowledgeBase, { deleteRule: 'cascade' })
  knowledgeBase!: KnowledgeBase;

  @Field()
  @Property({ length: 255 })
  title!: string;

  @Field(() => DocumentContentTypeEnum, { description: 'text/plain or text/markdown (GraphQL: text_plain, text_markdown)' })
  @Property({ type: 'string', length: 32 })
  contentType!: DocumentContentType;

  /** Lazy: lists leave the text out; the document read loads it (charged to the answer budget by sizeBytes first). */
  @Field({ description: 'The full text' })
  @Property({ type: 'text', lazy: true })
  content!: string;

  @Field(() => Int, { description: 'Size of the content in UTF-8 bytes' })
  @Property({ type: 'integer' })
  sizeBytes!: number;

  @Field(() => KnowledgeDocumentStatus)
  @Property({ type: 'string', length: 16 })
  status: KnowledgeDocumentStatus & Opt = KnowledgeDocumentStatus.processing;

  @Field(() => String, { nullable: true, description: 'Why processing failed' })
  @Property({ type: 'text', nullable: true })
  error: (string & Opt) | null = null;

  @Field(() => Int)
  @Property({ type: 'integer', default: 0 })
  chunkCount: number & Opt = 0;

  @Field(() => ID)
  get knowledgeBaseId(): string & Opt {
    return this.knowledgeBase.id;
  }
}
