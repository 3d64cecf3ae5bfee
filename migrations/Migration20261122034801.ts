import { Migration } from '@mikro-orm/migrations';

export class Migration20261122034801 extends Migration {
  override name = 'Migration20261122034801';

  override up(): void | Promise<void> {
    this.addSql(`alter table "execution_contacts" add "requeue" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "execution_contacts" drop column "requeue";`);
  }
}
