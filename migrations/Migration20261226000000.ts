import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42: a claim costs the same with 10k and with 1M pending contacts. The claim picks an
 * execution's due pending rows in (next_attempt_at nulls first, created_at, id) order; the old
 * (execution_id, status, next_attempt_at) index could not give that order, so every claim read and
 * sorted all the execution's pending rows (5 s with 1M on PostgreSQL 15, EXPLAIN in
 * docs/development/runner-claim.md). The partial index holds exactly the pending rows in that order,
 * so a claim reads the rows it takes and stops. The second serves the claim's "is this number on a
 * live call of the program" test, over live outbound calls only, so it stays small however many
 * calls a program made.
 */
export class Migration20261226000000 extends Migration {
  override name = 'Migration20261226000000';

  override up(): void | Promise<void> {
    this.addSql(
      `create index "execution_contacts_claim_order_index" on "execution_contacts" ("execution_id", "next_attempt_at" nulls first, "created_at", "id") where "status" = 'pending';`,
    );
    this.addSql(
      `create index "calls_live_outbound_index" on "calls" ("program_id", "to_number") where "direction" = 'outbound' and "status" in ('queued', 'ringing', 'in_progress');`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "calls_live_outbound_index";`);
    this.addSql(`drop index "execution_contacts_claim_order_index";`);
  }
}
