import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #39 (H2): the analysis worker counts its claims of a conversation. A claim whose process died
 * (a plan that ran it out of memory, a crash) left the conversation due again when its lease ran out,
 * and the next claim died the same way: after a restart the process crash-looped. The worker now
 * records the analysis as failed once a conversation has been claimed MAX_ANALYSIS_ATTEMPTS times
 * without a result, and runs a conversation claimed before on its own, not beside others.
 */
export class Migration20261218000000 extends Migration {
  override name = 'Migration20261218000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "conversations" add "analysis_attempts" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "conversations" drop column "analysis_attempts";`);
  }
}
