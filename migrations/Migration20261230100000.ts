import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #45: a call's time from the answer to the agent's first audio, a column of its own (filled
 * from turnLatency.firstAudioMs when the media stream ends), so lists and the CSV read it without
 * opening the JSON. Calls recorded before keep theirs in turnLatency and are copied here once.
 */
export class Migration20261230100000 extends Migration {
  override name = 'Migration20261230100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "first_audio_ms" double precision null;`);
    this.addSql(
      `update "calls" set "first_audio_ms" = ("turn_latency"->>'firstAudioMs')::double precision where jsonb_typeof("turn_latency"->'firstAudioMs') = 'number';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "calls" drop column "first_audio_ms";`);
  }
}
