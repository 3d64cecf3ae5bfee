import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #44: a program's `voicemail` setting ({message, action}: what is left after the beep, or a
 * hang-up), and a call's `voicemail_left_at` (when the message was handed to the carrier), from
 * which its outcome is `voicemail_left` once it ends.
 */
export class Migration20261231100000 extends Migration {
  override name = 'Migration20261231100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "programs" add "voicemail" jsonb null;`);
    this.addSql(`alter table "calls" add "voicemail_left_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "voicemail_left_at";`);
    this.addSql(`alter table "programs" drop column "voicemail";`);
  }
}
