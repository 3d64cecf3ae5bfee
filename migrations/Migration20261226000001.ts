import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42: one call in one request (POST /api/calls, GraphQL placeCall). A single call is a call
 * record without an execution: `variables` holds the values given for the agent's templates,
 * `lease_until` how long the runner that took it holds it (as execution_contacts.lease_until does a
 * campaign's), and the partial index is the queue the runners place such calls from (queued, not yet
 * claimed), oldest first, so taking the next ones reads only those.
 */
export class Migration20261226000001 extends Migration {
  override name = 'Migration20261226000001';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "variables" jsonb null, add "lease_until" timestamptz null;`);
    this.addSql(
      `create index "calls_direct_queue_index" on "calls" ("queued_at", "id") where "execution_id" is null and "direction" = 'outbound' and "status" = 'queued' and "claim_token" is null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "calls_direct_queue_index";`);
    this.addSql(`alter table "calls" drop column "variables", drop column "lease_until";`);
  }
}
