import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020501 extends Migration {
  override name = 'Migration20261122020501';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "organizations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(255) not null, "credit_balance" int not null default 0, primary key ("id"));`,
    );

    this.addSql(
      `create table "teams" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, primary key ("id"));`,
    );
    this.addSql(`create index "teams_organization_id_index" on "teams" ("organization_id");`);

    this.addSql(
      `create table "users" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "email" varchar(320) not null, "name" varchar(255) not null, "role" varchar(16) not null default 'member', primary key ("id"));`,
    );
    this.addSql(`create index "users_organization_id_index" on "users" ("organization_id");`);
    this.addSql(`alter table "users" add constraint "users_organization_id_email_unique" unique ("organization_id", "email");`);

    this.addSql(
      `create table "team_memberships" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "team_id" uuid not null, "user_id" uuid not null, "role" varchar(32) not null default 'member', primary key ("id"));`,
    );
    this.addSql(`create index "team_memberships_organization_id_index" on "team_memberships" ("organization_id");`);
    this.addSql(`create index "team_memberships_user_id_index" on "team_memberships" ("user_id");`);
    this.addSql(`alter table "team_memberships" add constraint "team_memberships_team_id_user_id_unique" unique ("team_id", "user_id");`);

    this.addSql(
      `create table "api_keys" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "user_id" uuid not null, "name" varchar(255) not null, "key_prefix" varchar(20) not null, "key_hash" varchar(64) not null, "is_active" boolean not null default true, "expires_at" timestamptz null, "last_used_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "api_keys_organization_id_index" on "api_keys" ("organization_id");`);
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(
      `alter table "teams" add constraint "teams_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "users" add constraint "users_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "team_memberships" add constraint "team_memberships_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "team_memberships" add constraint "team_memberships_team_id_foreign" foreign key ("team_id") references "teams" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "team_memberships" add constraint "team_memberships_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "teams" drop constraint "teams_organization_id_foreign";`);
    this.addSql(`alter table "users" drop constraint "users_organization_id_foreign";`);
    this.addSql(`alter table "team_memberships" drop constraint "team_memberships_organization_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_organization_id_foreign";`);
    this.addSql(`alter table "team_memberships" drop constraint "team_memberships_team_id_foreign";`);
    this.addSql(`alter table "team_memberships" drop constraint "team_memberships_user_id_foreign";`);
    this.addSql(`alter table "api_keys" drop constraint "api_keys_user_id_foreign";`);

    this.addSql(`drop table if exists "organizations" cascade;`);
    this.addSql(`drop table if exists "teams" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "team_memberships" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
  }
}
