import { Migration } from '@mikro-orm/migrations';

/** Voice: a conversation names the call it was spoken on (the call already names its conversation). */
export class Migration20261126100000 extends Migration {

  override name = 'Migration20261126100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "conversations" add "call_id" uuid null;`);
    this.addSql(`create index "conversations_call_id_index" on "conversations" ("call_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "conversations_call_id_index";`);
    this.addSql(`alter table "conversations" drop column "call_id";`);
  }

}
