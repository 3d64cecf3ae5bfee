import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021744 extends Migration {
  override name = 'Migration20261122021744';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "contacts" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) null, "phone" varchar(16) not null, "time_zone" varchar(64) null, "attributes" jsonb not null, "opted_out" boolean not null default false, primary key ("id"));`,
    );
    this.addSql(`create index "contacts_organization_id_index" on "contacts" ("organization_id");`);
    this.addSql(`alter table "contacts" add constraint "contacts_organization_id_phone_unique" unique ("organization_id", "phone");`);

    this.addSql(
      `create table "audiences" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, "description" text null, primary key ("id"));`,
    );
    this.addSql(`create index "audiences_organization_id_index" on "audiences" ("organization_id");`);

    this.addSql(
      `create table "audience_members" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "audience_id" uuid not null, "contact_id" uuid not null, primary key ("id"));`,
    );
    this.addSql(`create index "audience_members_organization_id_index" on "audience_members" ("organization_id");`);
    this.addSql(`create index "audience_members_contact_id_index" on "audience_members" ("contact_id");`);
    this.addSql(`alter table "audience_members" add constraint "audience_members_audience_id_contact_id_unique" unique ("audience_id", "contact_id");`);

    this.addSql(
      `alter table "contacts" add constraint "contacts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "audiences" add constraint "audiences_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "audience_members" add constraint "audience_members_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "audience_members" add constraint "audience_members_audience_id_foreign" foreign key ("audience_id") references "audiences" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "audience_members" add constraint "audience_members_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "audience_members" drop constraint "audience_members_contact_id_foreign";`);
    this.addSql(`alter table "audience_members" drop constraint "audience_members_audience_id_foreign";`);

    this.addSql(`drop table if exists "contacts" cascade;`);
    this.addSql(`drop table if exists "audiences" cascade;`);
    this.addSql(`drop table if exists "audience_members" cascade;`);
  }
}
