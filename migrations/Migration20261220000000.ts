import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #40: agents that know whom they are calling. An agent's templates declare their variables
 * (`agents.variables`) and it says a first message (`first_message`, a template; null for the
 * default greeting) or waits for the caller (`first_message_mode`); an execution gives variables
 * the same for every contact (`executions.variables`); a conversation keeps what its templates were
 * rendered from (`conversations.context`: the call, the contact, the program, the variables).
 */
export class Migration20261220000000 extends Migration {
  override name = 'Migration20261220000000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "agents" add column "first_message" text null, add column "first_message_mode" text not null default 'agent_speaks_first', add column "variables" jsonb not null default '[]';`,
    );
    this.addSql(
      `alter table "agents" add constraint "agents_first_message_mode_check" check ("first_message_mode" in ('agent_speaks_first', 'wait_for_caller'));`,
    );
    this.addSql(`alter table "executions" add column "variables" jsonb not null default '{}';`);
    this.addSql(`alter table "conversations" add column "context" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "conversations" drop column if exists "context";`);
    this.addSql(`alter table "executions" drop column if exists "variables";`);
    this.addSql(`alter table "agents" drop constraint if exists "agents_first_message_mode_check";`);
    this.addSql(`alter table "agents" drop column if exists "first_message", drop column if exists "first_message_mode", drop column if exists "variables";`);
  }
}
