import { Migration } from '@mikro-orm/migrations';

export class Migration20261122022934 extends Migration {
  override name = 'Migration20261122022934';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "business_entities" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "contact_id" uuid not null, "type" varchar(64) not null, "name" varchar(255) not null, "attributes" jsonb not null, primary key ("id"));`,
    );
    this.addSql(`create index "business_entities_organization_id_index" on "business_entities" ("organization_id");`);
    this.addSql(`create index "business_entities_contact_id_index" on "business_entities" ("contact_id");`);

    this.addSql(`alter table "teams" add constraint "teams_organization_id_name_unique" unique ("organization_id", "name");`);

    this.addSql(
      `alter table "business_entities" add constraint "business_entities_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "business_entities" add constraint "business_entities_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "business_entities" cascade;`);

    this.addSql(`alter table "teams" drop constraint "teams_organization_id_name_unique";`);
  }
}
