import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { KnowledgeBase } from './knowledge-base.entity.js';
import { KnowledgeDocument } from './knowledge-document.entity.js';

/** A passage of a document, the unit of retrieval. */
@Entity({ tableName: 'knowledge_chunks' })
// Declared here too so the migration generator keeps the index the retrieval query uses.
@Index({
  name: 'knowledge_chunks_content_fts_index',
  expression: `create index "knowledge_chunks_content_fts_index" on "knowledge_chunks" using gin (to_tsvector('english', "content"))`,
})
export class KnowledgeChunk extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => KnowledgeBase, { deleteRule: 'cascade' })
  @Index()
  knowledgeBase!: KnowledgeBase;

  @ManyToOne(() => KnowledgeDocument, { deleteRule: 'cascade' })
  @Index()
  document!: KnowledgeDocument;

  @Property({ type: 'integer' })
  ordinal!: number;

  @Property({ type: 'text' })
  content!: string;
}
