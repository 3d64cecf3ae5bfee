import { Migration } from '@mikro-orm/migrations';

/**
 * Security review, items 3 and 9. A speech-to-speech call's media stream is bound to the call: the
 * answer TwiML's stream URL carries a single-use nonce whose SHA-256 (hex) is kept in
 * `stream_nonce_hash`, consumed by one UPDATE on the upgrade, which stamps `stream_opened_at` (one
 * stream per call, across replicas). `webhook_replies` keeps, for the call's life, the key of each
 * `/gather` and `/inbound` request answered (Twilio's I-Twilio-Idempotency-Token, or a hash of the
 * signed URL and body; hashed) and the actions it answered, so a repeat is answered the same without
 * a second turn.
 */
export class Migration20261204000000 extends Migration {
  override name = 'Migration20261204000000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "calls" add "stream_nonce_hash" varchar(64) null, add "stream_opened_at" timestamptz null, add "webhook_replies" jsonb not null default '{}';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "stream_nonce_hash", drop column "stream_opened_at", drop column "webhook_replies";`);
  }
}
