import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #44, cold transfer: an agent lists whom it may hand a call to (`transfer_destinations`, its
 * transfer_call tool's enum), and a call keeps its transfer (`transfer`: the destination's name and
 * number or SIP URI, when, and what the carrier's <Dial> reported), null when it was not transferred.
 */
export class Migration20261231200000 extends Migration {
  override name = 'Migration20261231200000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "agents" add "transfer_destinations" jsonb not null default '[]';`);
    this.addSql(`alter table "calls" add "transfer" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "transfer";`);
    this.addSql(`alter table "agents" drop column "transfer_destinations";`);
  }
}
