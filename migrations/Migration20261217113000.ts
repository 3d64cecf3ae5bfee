import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #27: credits reserved per campaign runner in blocks. A runner moves a block of an
 * organization's credits into its reservation for one execution (one update of the organization's
 * row per block, not per claim) and spends its claims from it; what is left goes back when the
 * execution is no longer running, when the runner stops, or, after a crash, when the reservation's
 * lease runs out. `organizations.credit_balance` is then the credits not reserved; the balance a user
 * reads is that plus the reservations (see OrganizationService).
 */
export class Migration20261217113000 extends Migration {
  override name = 'Migration20261217113000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "credit_reservations" ("runner_id" varchar(48) not null, "execution_id" uuid not null, "organization_id" uuid not null, "remaining" int not null check ("remaining" >= 0), "lease_until" timestamptz not null, "created_at" timestamptz not null default now(), constraint "credit_reservations_pkey" primary key ("runner_id", "execution_id"));`,
    );
    this.addSql(`create index "credit_reservations_organization_id_index" on "credit_reservations" ("organization_id");`);
    this.addSql(`create index "credit_reservations_execution_id_index" on "credit_reservations" ("execution_id");`);
    this.addSql(
      `alter table "credit_reservations" add constraint "credit_reservations_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    // Whatever is still reserved goes back to its organization before the table goes.
    this.addSql(
      `update "organizations" o set "credit_balance" = o."credit_balance" + r."total" from (select "organization_id", sum("remaining") as "total" from "credit_reservations" group by 1) r where o."id" = r."organization_id";`,
    );
    this.addSql(`drop table if exists "credit_reservations";`);
  }
}
