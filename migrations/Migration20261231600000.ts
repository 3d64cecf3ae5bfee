import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #45, interruptions that understand back-channels: a caller's "mhm" said while the agent spoke
 * is stored as their message, marked, so a transcript shows it and the model's memory can leave it out.
 */
export class Migration20261231600000 extends Migration {
  override name = 'Migration20261231600000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "messages" add "back_channel" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "messages" drop column "back_channel";`);
  }
}
