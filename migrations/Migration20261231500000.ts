import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #44: a program's `screening_response`, what its outbound calls' agent answers an automated
 * call screener with (a template; null: the default built from the organization, the contact and
 * the call's `reason`).
 */
export class Migration20261231500000 extends Migration {
  override name = 'Migration20261231500000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "programs" add "screening_response" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "programs" drop column "screening_response";`);
  }
}
