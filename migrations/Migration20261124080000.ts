import { Migration } from '@mikro-orm/migrations';

/** An agent's memory answers the lastMessages it uses: 10 where it was stored without one. */
export class Migration20261124080000 extends Migration {
  override name = 'Migration20261124080000';

  override up(): void | Promise<void> {
    this.addSql(
      `update "agents" set "memory_config" = jsonb_set("memory_config", '{lastMessages}', '10'::jsonb) where "memory_config" is not null and jsonb_typeof("memory_config"->'lastMessages') is distinct from 'number';`,
    );
  }

  override down(): void | Promise<void> {
    // Nothing to undo: 10 is what an unset lastMessages meant.
  }
}
