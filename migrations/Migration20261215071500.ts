import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #25, the analysis of a call. An agent may carry an analysis plan (`analysis_plan`: a summary
 * on or off, a JSON Schema of the fields to extract). A call's conversation that ends with such an
 * agent is left due (`analysis_due_at`, indexed where set, which the analysis worker claims with a
 * lease) and both it and its call carry the result (`analysis`: status, summary, data, error, model,
 * analyzedAt), pending until the model has filled it.
 */
export class Migration20261215071500 extends Migration {
  override name = 'Migration20261215071500';

  override up(): void | Promise<void> {
    this.addSql(`alter table "agents" add "analysis_plan" jsonb null;`);
    this.addSql(`alter table "conversations" add "analysis" jsonb null, add "analysis_due_at" timestamptz null;`);
    this.addSql(`create index "conversations_analysis_due_at_index" on "conversations" ("analysis_due_at") where "analysis_due_at" is not null;`);
    this.addSql(`alter table "calls" add "analysis" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "analysis";`);
    this.addSql(`drop index "conversations_analysis_due_at_index";`);
    this.addSql(`alter table "conversations" drop column "analysis_due_at", drop column "analysis";`);
    this.addSql(`alter table "agents" drop column "analysis_plan";`);
  }
}
