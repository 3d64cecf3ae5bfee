import { Migration } from '@mikro-orm/migrations';

/** Voice: a conversation names the call it was spoken on (the call already names its conversation); what a program's simulated caller says. */
export class Migration20261126100000 extends Migration {
  override name = 'Migration20261126100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "conversations" add "call_id" uuid null;`);
    this.addSql(`create index "conversations_call_id_index" on "conversations" ("call_id");`);
    this.addSql(`alter table "programs" add "simulated_caller" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "programs" drop column "simulated_caller";`);
    this.addSql(`drop index "conversations_call_id_index";`);
    this.addSql(`alter table "conversations" drop column "call_id";`);
  }
}
