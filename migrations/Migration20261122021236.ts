import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021236 extends Migration {
  override name = 'Migration20261122021236';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "knowledge_bases" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, "description" text null, primary key ("id"));`,
    );
    this.addSql(`create index "knowledge_bases_organization_id_index" on "knowledge_bases" ("organization_id");`);

    this.addSql(
      `create table "knowledge_documents" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "knowledge_base_id" uuid not null, "title" varchar(255) not null, "content_type" varchar(32) not null, "content" text not null, "size_bytes" int not null, "status" varchar(16) not null default 'processing', "error" text null, "chunk_count" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`create index "knowledge_documents_organization_id_index" on "knowledge_documents" ("organization_id");`);
    this.addSql(`create index "knowledge_documents_knowledge_base_id_index" on "knowledge_documents" ("knowledge_base_id");`);

    this.addSql(
      `create table "knowledge_chunks" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "knowledge_base_id" uuid not null, "document_id" uuid not null, "ordinal" int not null, "content" text not null, primary key ("id"));`,
    );
    this.addSql(`create index "knowledge_chunks_organization_id_index" on "knowledge_chunks" ("organization_id");`);
    this.addSql(`create index "knowledge_chunks_knowledge_base_id_index" on "knowledge_chunks" ("knowledge_base_id");`);
    this.addSql(`create index "knowledge_chunks_document_id_index" on "knowledge_chunks" ("document_id");`);

    this.addSql(
      `alter table "knowledge_bases" add constraint "knowledge_bases_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "knowledge_documents" add constraint "knowledge_documents_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "knowledge_documents" add constraint "knowledge_documents_knowledge_base_id_foreign" foreign key ("knowledge_base_id") references "knowledge_bases" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "knowledge_chunks" add constraint "knowledge_chunks_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "knowledge_chunks" add constraint "knowledge_chunks_knowledge_base_id_foreign" foreign key ("knowledge_base_id") references "knowledge_bases" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "knowledge_chunks" add constraint "knowledge_chunks_document_id_foreign" foreign key ("document_id") references "knowledge_documents" ("id") on delete cascade;`,
    );

    // The expression index KnowledgeChunk declares; the retrieval query's to_tsvector matches it.
    this.addSql(`create index "knowledge_chunks_content_fts_index" on "knowledge_chunks" using gin (to_tsvector('english', "content"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "knowledge_documents" drop constraint "knowledge_documents_knowledge_base_id_foreign";`);
    this.addSql(`alter table "knowledge_chunks" drop constraint "knowledge_chunks_knowledge_base_id_foreign";`);
    this.addSql(`alter table "knowledge_chunks" drop constraint "knowledge_chunks_document_id_foreign";`);

    this.addSql(`drop table if exists "knowledge_bases" cascade;`);
    this.addSql(`drop table if exists "knowledge_documents" cascade;`);
    this.addSql(`drop table if exists "knowledge_chunks" cascade;`);
  }
}
