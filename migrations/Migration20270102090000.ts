import { Migration } from '@mikro-orm/migrations';

/** The tables with a `carrier` column, and what Migration20261231300000 fixed it to. */
const FIXED: Record<string, string[]> = {
  carrier_connections: ['twilio', 'telnyx'],
  programs: ['simulator', 'twilio', 'telnyx'],
  calls: ['simulator', 'twilio', 'telnyx', 'web'],
  call_recordings: ['simulator', 'twilio', 'telnyx'],
};

/**
 * Issue #43, one seam for every carrier: which carriers exist is the list of carrier modules the
 * gateway is built with (src/modules/telephony/carriers/built-in.ts), and the services check a kind
 * against it. So the `carrier` columns no longer list the kinds: each `<table>_carrier_check` says
 * only what every kind is (a route's path segment, as `withCarrierModules` requires: 2 to 32
 * lowercase letters, digits or -, starting with a letter), and a third carrier needs no migration.
 */
export class Migration20270102090000 extends Migration {
  override name = 'Migration20270102090000';

  override up(): void | Promise<void> {
    for (const table of Object.keys(FIXED)) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_carrier_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_carrier_check" check ("carrier" ~ '^[a-z][a-z0-9-]{1,31}$');`);
    }
  }

  override down(): void | Promise<void> {
    // The rows of a carrier the old checks do not know go, as Migration20261231300000's down removes Telnyx's.
    const others = (kinds: string[]) => `"carrier" not in (${kinds.map((kind) => `'${kind}'`).join(', ')})`;
    this.addSql(`delete from "call_recordings" where ${others(FIXED.call_recordings!)};`);
    this.addSql(`delete from "calls" where ${others(FIXED.calls!)};`);
    this.addSql(`update "programs" set "carrier" = 'simulator' where ${others(FIXED.programs!)};`);
    this.addSql(`delete from "carrier_connections" where ${others(FIXED.carrier_connections!)};`);
    for (const [table, kinds] of Object.entries(FIXED)) {
      this.addSql(`alter table "${table}" drop constraint if exists "${table}_carrier_check";`);
      this.addSql(`alter table "${table}" add constraint "${table}_carrier_check" check ("carrier" in (${kinds.map((kind) => `'${kind}'`).join(', ')}));`);
    }
  }
}
