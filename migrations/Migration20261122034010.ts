import { Migration } from '@mikro-orm/migrations';

export class Migration20261122034010 extends Migration {
  override name = 'Migration20261122034010';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "idempotency_keys" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "api_key_id" uuid not null, "user_id" uuid not null, "method" varchar(10) not null, "path" varchar(2048) not null, "key" varchar(255) not null, "request_hash" varchar(64) not null, "status" varchar(20) not null default 'in_progress', "response_status" int null, "response_body" jsonb null, "secret_omitted" boolean not null default false, "expires_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "idempotency_keys_organization_id_index" on "idempotency_keys" ("organization_id");`);
    this.addSql(`create index "idempotency_keys_organization_id_expires_at_index" on "idempotency_keys" ("organization_id", "expires_at");`);
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_organization_id_api_key_id_user__82512_unique" unique ("organization_id", "api_key_id", "user_id", "method", "path", "key");`,
    );

    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }
}
