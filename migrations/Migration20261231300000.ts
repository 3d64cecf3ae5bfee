import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #43, Telnyx as a second carrier: `telnyx` joins the carrier check constraints of carrier
 * connections, programs, calls (keeping `web`, which Migration20261228500000 added) and call
 * recordings; a connection keeps its account's public key (Telnyx signs webhooks with Ed25519) and
 * the TeXML Application its calls are placed with. The API key is sealed in auth_token_encrypted,
 * as Twilio's auth token is.
 */
export class Migration20261231300000 extends Migration {
  override name = 'Migration20261231300000';

  override up(): void | Promise<void> {
    this.checks({
      carrier_connections: ['twilio', 'telnyx'],
      programs: ['simulator', 'twilio', 'telnyx'],
      calls: ['simulator', 'twilio', 'telnyx', 'web'],
      call_recordings: ['simulator', 'twilio', 'telnyx'],
    });
    this.addSql(`alter table "carrier_connections" add "public_key" varchar(64) null, add "application_id" varchar(64) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "call_recordings" where "carrier" = 'telnyx';`);
    this.addSql(`delete from "calls" where "carrier" = 'telnyx';`);
    this.addSql(`update "programs" set "carrier" = 'simulator' where "carrier" = 'telnyx';`);
    this.addSql(`delete from "carrier_connections" where "carrier" = 'telnyx';`);
    this.addSql(`alter table "carrier_connections" drop column "public_key", drop column "application_id";`);
    this.checks({
      carrier_connections: ['twilio'],
      programs: ['simulator', 'twilio'],
      calls: ['simulator', 'twilio', 'web'],
      call_recordings: ['simulator', 'twilio'],
    });
  }

  /** Re-adds each table's `<table>_carrier_check` with these values. */
  private checks(values: Record<string, string[]>): void {
    for (const [table, kinds] of Object.entries(values)) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_carrier_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_carrier_check" check ("carrier" in (${kinds.map((kind) => `'${kind}'`).join(', ')}));`);
    }
  }
}
