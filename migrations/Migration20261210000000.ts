import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #25: the do-not-call list and one running execution per program.
 *
 * - `do_not_call_entries`: an organization's suppressed numbers, one row per (organization, phone),
 *   with where each came from (`manual`, `import`, `call`) and, for `call`, the call and contact.
 * - `executions.contacts_do_not_call`: the contacts an execution did not call because their number
 *   was on the list when their call was to be placed (they are counted in contacts_failed too).
 * - At most one `running` execution per program, held by a partial unique index. A database that
 *   already has two running executions of one program (the bug this closes) keeps the oldest running
 *   and pauses the others, so the index can be built; a user resumes them once the first has ended.
 * - Live outbound calls by (program, number): the claim skips a contact whose number is in a live
 *   call of the same program (another execution's), and this index keeps that lookup cheap.
 */
export class Migration20261210000000 extends Migration {
  override name = 'Migration20261210000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "do_not_call_entries" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "phone" varchar(16) not null, "source" text check ("source" in ('manual', 'import', 'call')) not null, "note" varchar(255) null, "call_id" uuid null, "contact_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`alter table "do_not_call_entries" add constraint "do_not_call_entries_organization_id_phone_unique" unique ("organization_id", "phone");`);
    this.addSql(
      `alter table "do_not_call_entries" add constraint "do_not_call_entries_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`create index "do_not_call_entries_organization_id_created_at_index" on "do_not_call_entries" ("organization_id", "created_at");`);

    this.addSql(`alter table "executions" add "contacts_do_not_call" int not null default 0;`);

    this.addSql(`update "executions" e set "status" = 'paused', "updated_at" = now()
      where e."status" = 'running' and exists (
        select 1 from "executions" o where o."program_id" = e."program_id" and o."status" = 'running'
          and (o."created_at", o."id") < (e."created_at", e."id"));`);
    this.addSql(`create unique index "executions_program_id_running_unique" on "executions" ("program_id") where "status" = 'running';`);

    this.addSql(
      `create index "calls_program_id_to_number_live_index" on "calls" ("program_id", "to_number") where "direction" = 'outbound' and "status" in ('queued', 'ringing', 'in_progress');`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "calls_program_id_to_number_live_index";`);
    this.addSql(`drop index "executions_program_id_running_unique";`);
    this.addSql(`alter table "executions" drop column "contacts_do_not_call";`);
    this.addSql(`drop table if exists "do_not_call_entries" cascade;`);
  }
}
