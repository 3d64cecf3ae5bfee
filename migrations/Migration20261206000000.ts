import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #23. A speech-to-speech call keeps its agent turns' latency (`turn_latency`: the provider,
 * each turn's end of speech, total, provider and gateway milliseconds, the median and the largest),
 * written once by the bridge when the media stream ends; null for every other call.
 */
export class Migration20261206000000 extends Migration {
  override name = 'Migration20261206000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "turn_latency" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "turn_latency";`);
  }
}
