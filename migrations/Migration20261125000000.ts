import { Migration } from '@mikro-orm/migrations';

/** Real calls: carrier connections, phone numbers, every call a record, and a program's carrier and caller ID. */
export class Migration20261125000000 extends Migration {
  override name = 'Migration20261125000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "carrier_connections" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, "carrier" text not null, "account_sid" varchar(64) not null, "auth_token_encrypted" text not null, "auth_token_last4" varchar(4) not null, "calls_per_second" int not null default 1, primary key ("id"));`,
    );
    this.addSql(`create index "carrier_connections_organization_id_index" on "carrier_connections" ("organization_id");`);
    this.addSql(
      `alter table "carrier_connections" add constraint "carrier_connections_organization_id_carrier_account_sid_unique" unique ("organization_id", "carrier", "account_sid");`,
    );

    this.addSql(
      `create table "calls" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "execution_id" uuid null, "program_id" uuid null, "contact_id" uuid null, "agent_id" uuid null, "execution_contact_id" uuid null, "claim_token" varchar(64) null, "direction" text not null, "from_number" varchar(16) null, "to_number" varchar(16) not null, "status" text not null default 'queued', "outcome" varchar(32) null, "answered_by" varchar(16) null, "attempt" int not null default 1, "carrier" text not null, "carrier_connection_id" uuid null, "carrier_call_id" varchar(64) null, "queued_at" timestamptz not null, "answered_at" timestamptz null, "ended_at" timestamptz null, "duration_seconds" int null, "reached_node_ids" jsonb not null, "error_text" text null, "credits_charged" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`create index "calls_carrier_connection_id_queued_at_index" on "calls" ("carrier_connection_id", "queued_at");`);
    this.addSql(`create index "calls_execution_id_contact_id_index" on "calls" ("execution_id", "contact_id");`);
    this.addSql(`create index "calls_organization_id_created_at_index" on "calls" ("organization_id", "created_at");`);
    this.addSql(`alter table "calls" add constraint "calls_carrier_carrier_call_id_unique" unique ("carrier", "carrier_call_id");`);
    this.addSql(`create index "calls_contact_id_index" on "calls" ("contact_id");`);
    this.addSql(`create index "calls_execution_contact_id_index" on "calls" ("execution_contact_id");`);
    this.addSql(
      `alter table "calls" add constraint "calls_execution_id_foreign" foreign key ("execution_id") references "executions" ("id") on delete cascade;`,
    );

    this.addSql(
      `create table "phone_numbers" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "number" varchar(16) not null, "label" varchar(255) null, "carrier_connection_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "phone_numbers_organization_id_index" on "phone_numbers" ("organization_id");`);
    this.addSql(`alter table "phone_numbers" add constraint "phone_numbers_organization_id_number_unique" unique ("organization_id", "number");`);

    this.addSql(`alter table "programs" add "carrier" text not null default 'simulator', add "from_number_id" uuid null;`);
    this.addSql(
      `alter table "programs" add constraint "programs_from_number_id_foreign" foreign key ("from_number_id") references "phone_numbers" ("id") on delete set null;`,
    );
    this.addSql(`alter table "programs" add constraint "programs_carrier_check" check ("carrier" in ('simulator', 'twilio'));`);

    this.addSql(
      `alter table "carrier_connections" add constraint "carrier_connections_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "carrier_connections" add constraint "carrier_connections_carrier_check" check ("carrier" in ('twilio'));`);

    this.addSql(
      `alter table "calls" add constraint "calls_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "calls" add constraint "calls_direction_check" check ("direction" in ('outbound', 'inbound'));`);
    this.addSql(
      `alter table "calls" add constraint "calls_status_check" check ("status" in ('queued', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer', 'failed', 'canceled'));`,
    );
    this.addSql(`alter table "calls" add constraint "calls_carrier_check" check ("carrier" in ('simulator', 'twilio'));`);

    this.addSql(
      `alter table "phone_numbers" add constraint "phone_numbers_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "phone_numbers" add constraint "phone_numbers_carrier_connection_id_foreign" foreign key ("carrier_connection_id") references "carrier_connections" ("id") on delete set null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "phone_numbers" drop constraint "phone_numbers_carrier_connection_id_foreign";`);
    this.addSql(`alter table "programs" drop constraint "programs_from_number_id_foreign";`);

    this.addSql(`drop table if exists "carrier_connections" cascade;`);
    this.addSql(`drop table if exists "calls" cascade;`);
    this.addSql(`drop table if exists "phone_numbers" cascade;`);

    this.addSql(`alter table "programs" drop constraint "programs_carrier_check";`);
    this.addSql(`alter table "programs" drop column "carrier", drop column "from_number_id";`);
  }
}
