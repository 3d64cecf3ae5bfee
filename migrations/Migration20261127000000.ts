import { Migration } from '@mikro-orm/migrations';

/** Events: the transactional outbox every change worth telling is written to; executions remember their last progress event (coalescing). */
export class Migration20261127000000 extends Migration {
  override name = 'Migration20261127000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "events" ("id" uuid not null, "organization_id" uuid not null, "type" varchar(64) not null, "created_at" timestamptz not null, "payload" jsonb not null, constraint "events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "events_organization_id_created_at_index" on "events" ("organization_id", "created_at");`);
    this.addSql(`create index "events_organization_id_type_created_at_index" on "events" ("organization_id", "type", "created_at");`);
    this.addSql(`create index "events_created_at_index" on "events" ("created_at");`);
    this.addSql(
      `alter table "events" add constraint "events_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "executions" add "progress_event_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "executions" drop column "progress_event_at";`);
    this.addSql(`drop table if exists "events" cascade;`);
  }
}
