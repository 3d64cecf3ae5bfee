import { Migration } from '@mikro-orm/migrations';

export class Migration20261122142019 extends Migration {
  override name = 'Migration20261122142019';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "credit_ledger" ("id" uuid not null, "organization_id" uuid not null, "kind" varchar(16) not null, "amount" int not null, "balance_after" int not null, "reason" varchar(500) null, "execution_id" uuid null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "credit_ledger_organization_id_created_at_index" on "credit_ledger" ("organization_id", "created_at");`);

    this.addSql(
      `alter table "credit_ledger" add constraint "credit_ledger_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_ledger" cascade;`);
  }
}
