import { Migration } from '@mikro-orm/migrations';

/** Passages keep their tsvector (computed once, on write) behind a GIN index, instead of one per passage per search. */
export class Migration20261123090000 extends Migration {
  override name = 'Migration20261123090000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "knowledge_chunks" add column "search_vector" tsvector generated always as (to_tsvector('english', "content")) stored;`);
    this.addSql(`create index "knowledge_chunks_search_vector_index" on "knowledge_chunks" using gin ("search_vector");`);
    this.addSql(`drop index if exists "knowledge_chunks_content_fts_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index "knowledge_chunks_content_fts_index" on "knowledge_chunks" using gin (to_tsvector('english', "content"));`);
    this.addSql(`drop index if exists "knowledge_chunks_search_vector_index";`);
    this.addSql(`alter table "knowledge_chunks" drop column "search_vector";`);
  }
}
