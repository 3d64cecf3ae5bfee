import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42, the long work off the request: a cancelled create import is `cancelling` while the import
 * worker deletes its contacts a chunk at a time (it waits with the running ones); an execution whose
 * audience is larger than a chunk is `preparing` while the campaign runner copies it into its work
 * queue, `snapshot_after` the last contact copied.
 */
const EXECUTION_STATUSES = ['scheduled', 'running', 'paused', 'paused_no_credits', 'paused_threshold', 'completed', 'stopped', 'cancelled'];

function executionStatusCheck(statuses: string[]): string {
  return `alter table "executions" add constraint "executions_status_check" check ("status" in (${statuses.map((status) => `'${status}'`).join(', ')}));`;
}

export class Migration20270101100000 extends Migration {
  override name = 'Migration20270101100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "contact_imports" drop constraint "contact_imports_status_check";`);
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_status_check" check ("status" in ('awaiting_file', 'queued', 'running', 'cancelling', 'completed', 'failed', 'cancelled'));`,
    );
    this.addSql(`drop index "contact_imports_waiting_index";`);
    this.addSql(`create index "contact_imports_waiting_index" on "contact_imports" ("created_at") where "status" in ('queued', 'running', 'cancelling');`);
    this.addSql(`alter table "executions" drop constraint "executions_status_check";`);
    this.addSql(executionStatusCheck(['preparing', ...EXECUTION_STATUSES]));
    this.addSql(`alter table "executions" add "snapshot_after" uuid null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "executions" drop column "snapshot_after";`);
    this.addSql(`update "executions" set "status" = 'cancelled' where "status" = 'preparing';`);
    this.addSql(`alter table "executions" drop constraint "executions_status_check";`);
    this.addSql(executionStatusCheck(EXECUTION_STATUSES));
    this.addSql(`update "contact_imports" set "status" = 'cancelled' where "status" = 'cancelling';`);
    this.addSql(`drop index "contact_imports_waiting_index";`);
    this.addSql(`create index "contact_imports_waiting_index" on "contact_imports" ("created_at") where "status" in ('queued', 'running');`);
    this.addSql(`alter table "contact_imports" drop constraint "contact_imports_status_check";`);
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_status_check" check ("status" in ('awaiting_file', 'queued', 'running', 'completed', 'failed', 'cancelled'));`,
    );
  }
}
