import { Migration } from '@mikro-orm/migrations';

export class Migration20261122022801 extends Migration {
  override name = 'Migration20261122022801';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "call_flows" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, "description" text null, "nodes" jsonb not null, "edges" jsonb not null, primary key ("id"));`,
    );
    this.addSql(`create index "call_flows_organization_id_index" on "call_flows" ("organization_id");`);

    this.addSql(
      `create table "programs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "name" varchar(255) not null, "description" text null, "kind" text not null, "status" text not null default 'draft', "flow_id" uuid null, "agent_id" uuid null, "audience_id" uuid null, "scheduled_start_at" timestamptz null, "scheduled_stop_at" timestamptz null, "calling_window" jsonb null, "max_concurrent_calls" int not null default 1, "retry_policy" jsonb not null, "auto_pause_rules" jsonb not null, "live_trigger" jsonb null, primary key ("id"));`,
    );
    this.addSql(`create index "programs_organization_id_index" on "programs" ("organization_id");`);

    this.addSql(
      `create table "executions" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "program_id" uuid not null, "audience_id" uuid null, "flow_id" uuid null, "status" text not null default 'scheduled', "total_contacts" int not null default 0, "contacts_completed" int not null default 0, "contacts_failed" int not null default 0, "contacts_pending" int not null default 0, "contacts_in_progress" int not null default 0, "scheduled_start_at" timestamptz null, "scheduled_stop_at" timestamptz null, "actual_start_at" timestamptz null, "actual_end_at" timestamptz null, "auto_pause_rules" jsonb not null, "node_counts" jsonb not null, "credits_spent" int not null default 0, primary key ("id"));`,
    );
    this.addSql(`create index "executions_organization_id_index" on "executions" ("organization_id");`);
    this.addSql(`create index "executions_status_index" on "executions" ("status");`);
    this.addSql(`create index "executions_program_id_created_at_index" on "executions" ("program_id", "created_at");`);

    this.addSql(
      `create table "execution_contacts" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "execution_id" uuid not null, "contact_id" uuid null, "phone" varchar(16) not null, "time_zone" varchar(64) null, "status" text not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz null, "claimed_by" varchar(64) null, "lease_until" timestamptz null, "last_outcome" varchar(64) null, "reached_node_ids" jsonb not null, "completed_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "execution_contacts_organization_id_index" on "execution_contacts" ("organization_id");`);
    this.addSql(
      `create index "execution_contacts_execution_id_status_next_attempt_at_index" on "execution_contacts" ("execution_id", "status", "next_attempt_at");`,
    );
    this.addSql(`alter table "execution_contacts" add constraint "execution_contacts_execution_id_contact_id_unique" unique ("execution_id", "contact_id");`);

    this.addSql(
      `create table "contact_triggers" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "program_id" uuid not null, "contact_id" uuid not null, "contact_phone" varchar(16) not null, "contact_name" varchar(255) null, "trigger_at" timestamptz not null, "attribute_value" varchar(64) not null, "status" text not null default 'pending', "triggered_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "contact_triggers_organization_id_index" on "contact_triggers" ("organization_id");`);
    this.addSql(`create index "contact_triggers_program_id_status_index" on "contact_triggers" ("program_id", "status");`);
    this.addSql(`create index "contact_triggers_status_trigger_at_index" on "contact_triggers" ("status", "trigger_at");`);
    this.addSql(
      `alter table "contact_triggers" add constraint "contact_triggers_program_id_contact_id_attribute_value_unique" unique ("program_id", "contact_id", "attribute_value");`,
    );

    this.addSql(
      `alter table "call_flows" add constraint "call_flows_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "programs" add constraint "programs_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "programs" add constraint "programs_flow_id_foreign" foreign key ("flow_id") references "call_flows" ("id") on delete set null;`);
    this.addSql(`alter table "programs" add constraint "programs_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete set null;`);
    this.addSql(
      `alter table "programs" add constraint "programs_audience_id_foreign" foreign key ("audience_id") references "audiences" ("id") on delete set null;`,
    );
    this.addSql(`alter table "programs" add constraint "programs_kind_check" check ("kind" in ('campaign', 'live'));`);
    this.addSql(`alter table "programs" add constraint "programs_status_check" check ("status" in ('draft', 'active', 'archived'));`);

    this.addSql(
      `alter table "executions" add constraint "executions_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "executions" add constraint "executions_program_id_foreign" foreign key ("program_id") references "programs" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "executions" add constraint "executions_status_check" check ("status" in ('scheduled', 'running', 'paused', 'paused_no_credits', 'paused_threshold', 'completed', 'stopped', 'cancelled'));`,
    );

    this.addSql(
      `alter table "execution_contacts" add constraint "execution_contacts_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "execution_contacts" add constraint "execution_contacts_execution_id_foreign" foreign key ("execution_id") references "executions" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "execution_contacts" add constraint "execution_contacts_contact_id_foreign" foreign key ("contact_id") references "contacts" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "execution_contacts" add constraint "execution_contacts_status_check" check ("status" in ('pending', 'in_progress', 'completed', 'failed'));`,
    );

    this.addSql(
      `alter table "contact_triggers" add constraint "contact_triggers_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_triggers" add constraint "contact_triggers_program_id_foreign" foreign key ("program_id") references "programs" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "contact_triggers" add constraint "contact_triggers_status_check" check ("status" in ('pending', 'triggered', 'cancelled'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "programs" drop constraint "programs_flow_id_foreign";`);
    this.addSql(`alter table "executions" drop constraint "executions_program_id_foreign";`);
    this.addSql(`alter table "contact_triggers" drop constraint "contact_triggers_program_id_foreign";`);
    this.addSql(`alter table "execution_contacts" drop constraint "execution_contacts_execution_id_foreign";`);

    this.addSql(`drop table if exists "call_flows" cascade;`);
    this.addSql(`drop table if exists "programs" cascade;`);
    this.addSql(`drop table if exists "executions" cascade;`);
    this.addSql(`drop table if exists "execution_contacts" cascade;`);
    this.addSql(`drop table if exists "contact_triggers" cascade;`);
  }
}
