import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #45: Twilio accounts that sign their webhooks with a Webhooks Rule's SharedKey (the
 * `X-Twilio-Webhooks-Signature-Settings` header, HMAC-SHA1 or HMAC-SHA256) instead of the auth
 * token. A connection keeps that key's secret sealed like its auth token (write-only, last 4 shown).
 */
export class Migration20261230000000 extends Migration {
  override name = 'Migration20261230000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "carrier_connections" add "webhook_key_encrypted" text null, add "webhook_key_last4" varchar(4) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "carrier_connections" drop column "webhook_key_encrypted", drop column "webhook_key_last4";`);
  }
}
