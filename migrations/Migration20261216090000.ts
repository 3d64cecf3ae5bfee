import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #25: call recordings.
 *
 * - `programs.recording`: whether and how a program's answered calls are recorded (null: not).
 * - `organizations.recording_retention_days`: how long recordings are kept (null: until deleted).
 * - `call_recordings`: one per recorded call, with the carrier's recording id and state (never its
 *   media URL), when and why its audio was deleted, and the simulator's generated audio (`audio`).
 *   The partial index serves the retention pass: recordings not yet deleted, oldest first.
 */
export class Migration20261216090000 extends Migration {
  override name = 'Migration20261216090000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "programs" add "recording" jsonb null;`);
    this.addSql(`alter table "organizations" add "recording_retention_days" int null;`);

    this.addSql(
      `create table "call_recordings" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "organization_id" uuid not null, "call_id" uuid not null, "carrier" text check ("carrier" in ('simulator', 'twilio')) not null, "carrier_connection_id" uuid null, "carrier_recording_id" varchar(64) null, "status" text check ("status" in ('in_progress', 'completed', 'absent', 'failed', 'refused')) not null, "channels" text check ("channels" in ('mono', 'dual')) not null, "duration_seconds" int null, "error_text" text null, "deleted_at" timestamptz null, "deletion_reason" text check ("deletion_reason" in ('user', 'retention', 'carrier')) null, "audio" bytea null, primary key ("id"));`,
    );
    this.addSql(`alter table "call_recordings" add constraint "call_recordings_call_id_unique" unique ("call_id");`);
    this.addSql(`create index "call_recordings_organization_id_created_at_index" on "call_recordings" ("organization_id", "created_at");`);
    this.addSql(
      `create index "call_recordings_kept_created_at_index" on "call_recordings" ("created_at") where "deleted_at" is null and "status" = 'completed';`,
    );
    this.addSql(
      `alter table "call_recordings" add constraint "call_recordings_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "call_recordings" add constraint "call_recordings_call_id_foreign" foreign key ("call_id") references "calls" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "call_recordings" cascade;`);
    this.addSql(`alter table "organizations" drop column "recording_retention_days";`);
    this.addSql(`alter table "programs" drop column "recording";`);
  }
}
