import { Migration } from '@mikro-orm/migrations';

/** Voice: a call's conversation and voice session, and what a number's inbound calls reach. */
export class Migration20261126000000 extends Migration {
  override name = 'Migration20261126000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "calls" add "conversation_id" uuid null, add "voice_state" jsonb null;`);
    this.addSql(`create index "calls_conversation_id_index" on "calls" ("conversation_id");`);
    this.addSql(
      `alter table "calls" add constraint "calls_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on delete set null;`,
    );
    this.addSql(`alter table "phone_numbers" add "inbound_agent_id" uuid null, add "inbound_flow_id" uuid null;`);
    this.addSql(
      `alter table "phone_numbers" add constraint "phone_numbers_inbound_agent_id_foreign" foreign key ("inbound_agent_id") references "agents" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "phone_numbers" add constraint "phone_numbers_inbound_flow_id_foreign" foreign key ("inbound_flow_id") references "call_flows" ("id") on delete set null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "phone_numbers" drop constraint "phone_numbers_inbound_flow_id_foreign";`);
    this.addSql(`alter table "phone_numbers" drop constraint "phone_numbers_inbound_agent_id_foreign";`);
    this.addSql(`alter table "phone_numbers" drop column "inbound_agent_id", drop column "inbound_flow_id";`);
    this.addSql(`alter table "calls" drop constraint "calls_conversation_id_foreign";`);
    this.addSql(`drop index "calls_conversation_id_index";`);
    this.addSql(`alter table "calls" drop column "conversation_id", drop column "voice_state";`);
  }
}
