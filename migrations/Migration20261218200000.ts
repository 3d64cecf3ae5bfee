import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #39 (M1): recording retention skips, with back-off, a recording it could not delete at the
 * carrier (its connection gone, its token revoked, the carrier down) instead of trying it first on
 * every pass, and says so on the recording: how many times it failed, why, and when it tries again.
 */
export class Migration20261218200000 extends Migration {
  override name = 'Migration20261218200000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "call_recordings" add column "retention_failures" int not null default 0, add column "retention_error" text null, add column "retention_retry_at" timestamptz null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "call_recordings" drop column "retention_failures", drop column "retention_error", drop column "retention_retry_at";`);
  }
}
