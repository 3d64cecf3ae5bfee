import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #39 (M4): one import per organization at a time, across replicas, and a contact import that
 * writes in chunks yet leaves all or nothing. A running import holds its organization's row (taken with
 * one INSERT … ON CONFLICT DO NOTHING, so two at once cannot both get it) and beats its heartbeat in each
 * chunk's transaction (by its token, so an import whose place was taken over cannot touch the new
 * holder's); a contact import lists the ids it writes, so an import whose process died is
 * undone (its contacts deleted) once its heartbeat is older than the lease, or at the start of the
 * embedded database's one process.
 */
export class Migration20261218100000 extends Migration {
  override name = 'Migration20261218100000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "organization_imports" ("organization_id" uuid not null, "token" uuid not null, "kind" varchar(16) not null, "started_at" timestamptz not null default now(), "heartbeat_at" timestamptz not null default now(), "contact_ids" uuid[] null, constraint "organization_imports_pkey" primary key ("organization_id"));`,
    );
    this.addSql(
      `alter table "organization_imports" add constraint "organization_imports_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "organization_imports";`);
  }
}
