import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #25. An execution counts its finished contacts by outcome (`outcome_counts`: the outcome of
 * each contact's last call, or why it was not called — `do_not_call`, `opted_out`, `contact_deleted`),
 * so its results say what happened rather than only completed or failed. Executions that exist are
 * counted from their contacts' rows.
 */
export class Migration20261214000000 extends Migration {
  override name = 'Migration20261214000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "executions" add "outcome_counts" jsonb not null default '{}';`);
    this.addSql(`update "executions" e set "outcome_counts" = coalesce((
      select jsonb_object_agg(t.outcome, t.n) from (
        select ec.last_outcome as outcome, count(*)::int as n from "execution_contacts" ec
         where ec.execution_id = e.id and ec.status in ('completed', 'failed') and ec.last_outcome is not null
         group by ec.last_outcome) t), '{}'::jsonb);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "executions" drop column "outcome_counts";`);
  }
}
