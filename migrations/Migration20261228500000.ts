import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #43, web calls: a person talks to an agent from a browser tab. A call's `channel` says
 * whether it came over the phone or the web (a web call's carrier is `web`: no carrier carries it);
 * an organization lists the origins whose pages may open a web call; and a web call starts from a
 * short-lived, single-use token, kept only as its SHA-256.
 */
export class Migration20261228500000 extends Migration {
  override name = 'Migration20261228500000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "channel" text check ("channel" in ('phone', 'web')) not null default 'phone';`);
    this.addSql(`alter table "calls" drop constraint if exists "calls_carrier_check";`);
    this.addSql(`alter table "calls" add constraint "calls_carrier_check" check ("carrier" in ('simulator', 'twilio', 'web'));`);
    this.addSql(`alter table "organizations" add "web_call_origins" jsonb not null default '[]';`);
    this.addSql(
      `create table "web_call_tokens" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "agent_id" uuid not null, "api_key_id" uuid null, "token_hash" varchar(64) not null, "variables" jsonb not null default '{}', "expires_at" timestamptz not null, "used_at" timestamptz null, "call_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`alter table "web_call_tokens" add constraint "web_call_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "web_call_tokens_organization_id_index" on "web_call_tokens" ("organization_id");`);
    this.addSql(`create index "web_call_tokens_expires_at_index" on "web_call_tokens" ("expires_at");`);
    this.addSql(
      `alter table "web_call_tokens" add constraint "web_call_tokens_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "web_call_tokens" cascade;`);
    this.addSql(`alter table "organizations" drop column "web_call_origins";`);
    this.addSql(`delete from "calls" where "carrier" = 'web';`);
    this.addSql(`alter table "calls" drop constraint if exists "calls_carrier_check";`);
    this.addSql(`alter table "calls" add constraint "calls_carrier_check" check ("carrier" in ('simulator', 'twilio'));`);
    this.addSql(`alter table "calls" drop column "channel";`);
  }
}
