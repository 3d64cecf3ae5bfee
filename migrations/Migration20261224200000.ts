import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42: CSV import jobs.
 *
 * - contacts.external_id: the organization's own key for a contact (a CRM's id), unique where set, so a
 *   weekly export is upserted by it. contacts.import_id: the import that last wrote the contact, so an
 *   import tells a row repeated in its file from a contact that was there before, and a `create` import
 *   that ends refused or cancelled deletes what it wrote (and only that).
 * - contact_imports: a job, its counts and where it is (rows_read: every row before it is written and
 *   counted, in the same transaction as the counts, so a restart resumes there, never half-counted).
 * - contact_import_parts: the uploaded file, kept in parts of 1 MiB until the job ends, so a job survives
 *   a restart and runs on whichever replica claims it.
 * - contact_import_refusals: each refused row, its number, reason and cells, for the refused-rows CSV.
 */
export class Migration20261224200000 extends Migration {
  override name = 'Migration20261224200000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "contacts" add "external_id" varchar(255) null, add "import_id" uuid null;`);
    this.addSql(
      `create unique index "contacts_organization_external_id_unique" on "contacts" ("organization_id", "external_id") where "external_id" is not null;`,
    );
    this.addSql(`create index "contacts_import_id_index" on "contacts" ("import_id") where "import_id" is not null;`);
    this.addSql(`create table "contact_imports" (
      "id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "organization_id" uuid not null references "organizations" ("id") on delete cascade,
      "status" text not null, "mode" text not null, "key" text not null, "audience_id" uuid null,
      "file_bytes" int not null default 0, "rows_read" int not null default 0, "imported" int not null default 0,
      "updated" int not null default 0, "skipped" int not null default 0, "refused" int not null default 0,
      "do_not_call" int not null default 0, "columns" jsonb null, "error" text null,
      "lease_until" timestamptz null, "started_at" timestamptz null, "finished_at" timestamptz null,
      primary key ("id"),
      constraint "contact_imports_status_check" check ("status" in ('awaiting_file', 'queued', 'running', 'completed', 'failed', 'cancelled')),
      constraint "contact_imports_mode_check" check ("mode" in ('create', 'upsert', 'skip')),
      constraint "contact_imports_key_check" check ("key" in ('phone', 'externalId')));`);
    this.addSql(`create index "contact_imports_organization_created_at_id_index" on "contact_imports" ("organization_id", "created_at", "id");`);
    // One running import per organization, whichever replica claims it.
    this.addSql(`create unique index "contact_imports_one_running_index" on "contact_imports" ("organization_id") where "status" = 'running';`);
    this.addSql(`create index "contact_imports_waiting_index" on "contact_imports" ("created_at") where "status" in ('queued', 'running');`);
    this.addSql(
      `create table "contact_import_parts" ("import_id" uuid not null references "contact_imports" ("id") on delete cascade, "seq" int not null, "data" bytea not null, primary key ("import_id", "seq"));`,
    );
    this.addSql(
      `create table "contact_import_refusals" ("import_id" uuid not null references "contact_imports" ("id") on delete cascade, "row_number" int not null, "reason" text not null, "cells" jsonb not null, primary key ("import_id", "row_number"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table "contact_import_refusals"; drop table "contact_import_parts"; drop table "contact_imports";`);
    this.addSql(`drop index "contacts_import_id_index"; drop index "contacts_organization_external_id_unique";`);
    this.addSql(`alter table "contacts" drop column "external_id", drop column "import_id";`);
  }
}
