import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #40, second half: agents that act for the caller. An organization's HTTP tools (`tools`:
 * header values and signing secrets sealed under CREDENTIALS_KEY) and MCP servers (`mcp_servers`:
 * the auth header sealed, the listed tools kept), the tools an agent may call (`agents.tool_ids`,
 * `agents.mcp_tools`), and the record of every call (`tool_calls`, in its conversation's order;
 * `conversations.tool_call_count` numbers them).
 */
export class Migration20261220100000 extends Migration {
  override name = 'Migration20261220100000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "tools" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(64) not null, "description" text not null, "parameters" jsonb not null, "url" varchar(2048) not null, "method" text not null default 'POST', "header_names" jsonb not null default '[]', "headers_encrypted" text null, "timeout_ms" int not null default 5000, "secret_encrypted" text not null, "secret_hint" varchar(8) not null, "previous_secret_encrypted" text null, "previous_secret_expires_at" timestamptz null, constraint "tools_pkey" primary key ("id"), constraint "tools_method_check" check ("method" in ('POST', 'PUT', 'PATCH')));`,
    );
    this.addSql(`create index "tools_organization_id_index" on "tools" ("organization_id");`);
    this.addSql(`alter table "tools" add constraint "tools_organization_id_name_unique" unique ("organization_id", "name");`);
    this.addSql(
      `alter table "tools" add constraint "tools_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `create table "mcp_servers" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(64) not null, "url" varchar(2048) not null, "auth_header_name" varchar(64) null, "auth_encrypted" text null, "status" text not null default 'pending', "tools" jsonb not null default '[]', "refreshed_at" timestamptz null, "last_error" varchar(500) null, constraint "mcp_servers_pkey" primary key ("id"), constraint "mcp_servers_status_check" check ("status" in ('pending', 'ready', 'unavailable')));`,
    );
    this.addSql(`create index "mcp_servers_organization_id_index" on "mcp_servers" ("organization_id");`);
    this.addSql(`alter table "mcp_servers" add constraint "mcp_servers_organization_id_name_unique" unique ("organization_id", "name");`);
    this.addSql(
      `alter table "mcp_servers" add constraint "mcp_servers_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `create table "tool_calls" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "conversation_id" uuid not null, "agent_id" uuid not null, "call_id" uuid null, "sequence" int not null, "after_sequence" int not null, "tool" varchar(64) not null, "source" text not null, "tool_id" uuid null, "arguments" jsonb null, "status" text not null, "status_code" int null, "duration_ms" int not null, "answer" text null, "error" text null, constraint "tool_calls_pkey" primary key ("id"), constraint "tool_calls_source_check" check ("source" in ('http', 'mcp')), constraint "tool_calls_status_check" check ("status" in ('succeeded', 'failed', 'rejected')));`,
    );
    this.addSql(`create index "tool_calls_organization_id_index" on "tool_calls" ("organization_id");`);
    this.addSql(`create index "tool_calls_conversation_id_sequence_index" on "tool_calls" ("conversation_id", "sequence");`);
    this.addSql(
      `alter table "tool_calls" add constraint "tool_calls_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tool_calls" add constraint "tool_calls_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete cascade;`,
    );

    this.addSql(`alter table "agents" add column "tool_ids" jsonb not null default '[]', add column "mcp_tools" jsonb not null default '[]';`);
    this.addSql(`alter table "conversations" add column "tool_call_count" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "conversations" drop column if exists "tool_call_count";`);
    this.addSql(`alter table "agents" drop column if exists "tool_ids", drop column if exists "mcp_tools";`);
    this.addSql(`drop table if exists "tool_calls" cascade;`);
    this.addSql(`drop table if exists "mcp_servers" cascade;`);
    this.addSql(`drop table if exists "tools" cascade;`);
  }
}
