import { Migration } from '@mikro-orm/migrations';

/**
 * Campaign runners announce themselves: each started runner writes its id and the time on every
 * tick, so the runners of all replicas know how many share the work and each claims its share of
 * an execution's concurrent calls (a runner that stops deletes its row; a dead one's row ages out).
 */
export class Migration20261130000000 extends Migration {
  override name = 'Migration20261130000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "runner_heartbeats" ("id" varchar(48) not null, "seen_at" timestamptz not null, constraint "runner_heartbeats_pkey" primary key ("id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "runner_heartbeats";`);
  }
}
