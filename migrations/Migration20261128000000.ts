import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks: endpoints (the signing secret sealed), one delivery per (endpoint, event) fanned out by a
 * trigger on `events` in the event's own transaction (both write paths: raw SQL and ORM flushes), and
 * the log of every attempt.
 */
export class Migration20261128000000 extends Migration {
  override name = 'Migration20261128000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_endpoints" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "url" varchar(2048) not null, "event_types" jsonb not null default '[]', "description" varchar(500) null, "enabled" boolean not null default true, "disabled_reason" varchar(500) null, "secret_encrypted" text not null, "secret_hint" varchar(8) not null, "previous_secret_encrypted" text null, "previous_secret_expires_at" timestamptz null, "failing_since" timestamptz null, constraint "webhook_endpoints_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_endpoints_organization_id_index" on "webhook_endpoints" ("organization_id");`);
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );

    this.addSql(
      `create table "webhook_deliveries" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "endpoint_id" uuid not null, "event_id" uuid null, "message_id" uuid not null, "event_type" varchar(64) not null, "event_created_at" timestamptz not null, "payload" jsonb null, "manual" boolean not null default false, "status" varchar(16) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "lease_until" timestamptz null, "last_attempt_at" timestamptz null, "last_status_code" int null, "last_latency_ms" int null, "last_error" varchar(1000) null, constraint "webhook_deliveries_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_endpoint_id_created_at_index" on "webhook_deliveries" ("endpoint_id", "created_at");`);
    this.addSql(`create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
    // The fan-out writes one row per (endpoint, event); re-sends on demand are rows of their own.
    this.addSql(`create unique index "webhook_deliveries_endpoint_event_unique" on "webhook_deliveries" ("endpoint_id", "event_id") where not "manual";`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on delete cascade;`,
    );

    this.addSql(
      `create table "webhook_delivery_attempts" ("id" uuid not null, "delivery_id" uuid not null, "attempt" int not null, "attempted_at" timestamptz not null, "status_code" int null, "latency_ms" int not null, "error" varchar(1000) null, constraint "webhook_delivery_attempts_pkey" primary key ("id"));`,
    );
    // One row per attempt number: two workers can never both log the same attempt of a delivery.
    this.addSql(`create unique index "webhook_delivery_attempts_delivery_id_attempt_unique" on "webhook_delivery_attempts" ("delivery_id", "attempt");`);
    this.addSql(
      `alter table "webhook_delivery_attempts" add constraint "webhook_delivery_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on delete cascade;`,
    );

    // Every event row, however it was written, fans out to the organization's enabled endpoints
    // subscribed to its type (an empty list subscribes to all), in the event's own transaction.
    this.addSql(`create or replace function webhook_fan_out() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (id, created_at, updated_at, organization_id, endpoint_id, event_id, message_id, event_type, event_created_at, status, attempts, next_attempt_at)
  select gen_random_uuid(), clock_timestamp(), clock_timestamp(), new.organization_id, e.id, new.id, new.id, new.type, new.created_at, 'pending', 0, clock_timestamp()
  from webhook_endpoints e
  where e.organization_id = new.organization_id and e.enabled
    and (e.event_types = '[]'::jsonb or e.event_types @> jsonb_build_array(new.type));
  return null;
end
$$;`);
    this.addSql(`create trigger events_webhook_fan_out after insert on events for each row execute function webhook_fan_out();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists events_webhook_fan_out on events;`);
    this.addSql(`drop function if exists webhook_fan_out();`);
    this.addSql(`drop table if exists "webhook_delivery_attempts" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);
  }
}
