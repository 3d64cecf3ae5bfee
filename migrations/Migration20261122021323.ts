import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021323 extends Migration {
  override name = 'Migration20261122021323';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "agents" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(128) not null, "description" text null, "instructions" text not null, "policy" text null, "status" text not null default 'draft', "version" int not null default 1, "model_config" jsonb not null, "voice_config" jsonb null, "memory_config" jsonb null, "metadata" jsonb null, "knowledge_base_config" jsonb null, "resolution_criteria" jsonb not null, "created_by" uuid null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "agents_organization_id_index" on "agents" ("organization_id");`);

    this.addSql(
      `create table "conversations" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "agent_id" uuid not null, "status" text not null default 'pending', "title" varchar(255) null, "outcome" jsonb null, "ended_at" timestamptz null, "message_count" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`create index "conversations_organization_id_index" on "conversations" ("organization_id");`);
    this.addSql(`create index "conversations_agent_id_created_at_index" on "conversations" ("agent_id", "created_at");`);

    this.addSql(
      `create table "messages" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "conversation_id" uuid not null, "sequence" int not null, "role" text not null, "content" text not null, "usage" jsonb null, "model" varchar(255) null, primary key ("id"));`,
    );
    this.addSql(`create index "messages_organization_id_index" on "messages" ("organization_id");`);
    this.addSql(`alter table "messages" add constraint "messages_conversation_id_sequence_unique" unique ("conversation_id", "sequence");`);

    this.addSql(
      `alter table "agents" add constraint "agents_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "agents" add constraint "agents_status_check" check ("status" in ('draft', 'active', 'archived'));`);

    this.addSql(
      `alter table "conversations" add constraint "conversations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "conversations" add constraint "conversations_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "conversations" add constraint "conversations_status_check" check ("status" in ('pending', 'active', 'ended', 'failed', 'archived'));`,
    );

    this.addSql(
      `alter table "messages" add constraint "messages_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "messages" add constraint "messages_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "messages" add constraint "messages_role_check" check ("role" in ('user', 'assistant'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "conversations" drop constraint "conversations_agent_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_conversation_id_foreign";`);

    this.addSql(`drop table if exists "agents" cascade;`);
    this.addSql(`drop table if exists "conversations" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
  }
}
