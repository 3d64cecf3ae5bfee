import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #41: why a running execution places no calls. The campaign runner writes what it found on
 * its last look at the execution (a reason and, where known, when the next call can be placed) when
 * that changes; every state move clears it. The API's waitingReason and nextCallAt are these for a
 * running execution, and follow from the status for the others.
 */
export class Migration20261222000000 extends Migration {
  override name = 'Migration20261222000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "executions" add column "runner_waiting_reason" text null, add column "runner_next_call_at" timestamptz null;`);
    this.addSql(
      `alter table "executions" add constraint "executions_runner_waiting_reason_check" check ("runner_waiting_reason" in ('scheduled', 'paused', 'paused_by_rule', 'no_credits', 'concurrency_limit', 'carrier_not_configured', 'carrier_unavailable', 'carrier_pacing', 'outside_calling_window', 'retry_wait', 'number_in_call'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "executions" drop constraint if exists "executions_runner_waiting_reason_check";`);
    this.addSql(`alter table "executions" drop column if exists "runner_waiting_reason", drop column if exists "runner_next_call_at";`);
  }
}
