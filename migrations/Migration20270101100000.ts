import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42, the long work off the request: a cancelled create import is `cancelling` while the import
 * worker deletes its contacts a chunk at a time (it waits with the running ones); an execution whose
 * audience is larger than a chunk is `preparing` while the campaign runner copies it into its work
 * queue, `snapshot_after` the last contact copied.
 *
 * And the indexes that Migration20261231400000's keyset indexes made redundant: each one below is a
 * plain btree whose columns begin the keyset index named beside it, which serves every look-up, order
 * and foreign-key check it served (test/platform/indexes.test.ts reads the plans on both databases).
 * Each write kept both up to date; unique and partial indexes are kept.
 *
 * And list_row_counts: the sizes of the lists that grow to millions of rows (an organization's credit
 * ledger, events and calls; an execution's calls), so that their unfiltered pages read `total` rather
 * than count it. Statement-level triggers append one row per statement and owner (`rows` added or, on a
 * delete, taken away), in the statement's transaction, so a snapshot's sum is exactly its rows; the
 * campaign runner folds each owner's rows into one (src/db/list-counts.ts). Appending, not updating one
 * counter row, keeps concurrent writers from queueing (or deadlocking) on it.
 */
export const REDUNDANT_INDEXES: [table: string, index: string, columns: string[], keyset: string][] = [
  ['api_keys', 'api_keys_user_id_index', ['user_id'], 'api_keys_user_id_created_at_id_keyset'],
  ['business_entities', 'business_entities_organization_id_index', ['organization_id'], 'business_entities_organization_id_created_at_id_keyset'],
  ['call_flows', 'call_flows_organization_id_index', ['organization_id'], 'call_flows_organization_id_created_at_id_keyset'],
  ['calls', 'calls_organization_id_created_at_index', ['organization_id', 'created_at'], 'calls_organization_id_created_at_id_keyset'],
  ['carrier_connections', 'carrier_connections_organization_id_index', ['organization_id'], 'carrier_connections_organization_id_created_at_id_keyset'],
  ['conversations', 'conversations_agent_id_created_at_index', ['agent_id', 'created_at'], 'conversations_agent_id_created_at_id_keyset'],
  ['credit_ledger', 'credit_ledger_organization_id_created_at_index', ['organization_id', 'created_at'], 'credit_ledger_organization_id_created_at_id_keyset'],
  [
    'do_not_call_entries',
    'do_not_call_entries_organization_id_created_at_index',
    ['organization_id', 'created_at'],
    'do_not_call_entries_organization_id_created_at_id_keyset',
  ],
  ['events', 'events_organization_id_created_at_index', ['organization_id', 'created_at'], 'events_organization_id_created_at_id_keyset'],
  ['executions', 'executions_program_id_created_at_index', ['program_id', 'created_at'], 'executions_program_id_created_at_id_keyset'],
  ['knowledge_bases', 'knowledge_bases_organization_id_index', ['organization_id'], 'knowledge_bases_organization_id_created_at_id_keyset'],
  ['knowledge_documents', 'knowledge_documents_knowledge_base_id_index', ['knowledge_base_id'], 'knowledge_documents_knowledge_base_id_created_at_id_keyset'],
  ['mcp_servers', 'mcp_servers_organization_id_index', ['organization_id'], 'mcp_servers_organization_id_created_at_id_keyset'],
  ['programs', 'programs_organization_id_index', ['organization_id'], 'programs_organization_id_created_at_id_keyset'],
  ['teams', 'teams_organization_id_index', ['organization_id'], 'teams_organization_id_created_at_id_keyset'],
  ['tool_calls', 'tool_calls_conversation_id_sequence_index', ['conversation_id', 'sequence'], 'tool_calls_conversation_id_sequence_id_keyset'],
  ['tools', 'tools_organization_id_index', ['organization_id'], 'tools_organization_id_created_at_id_keyset'],
  ['users', 'users_organization_id_index', ['organization_id'], 'users_organization_id_created_at_id_keyset'],
  [
    'webhook_deliveries',
    'webhook_deliveries_endpoint_id_created_at_index',
    ['endpoint_id', 'created_at'],
    'webhook_deliveries_endpoint_id_created_at_id_keyset',
  ],
  ['webhook_endpoints', 'webhook_endpoints_organization_id_index', ['organization_id'], 'webhook_endpoints_organization_id_created_at_id_keyset'],
];

const EXECUTION_STATUSES = ['scheduled', 'running', 'paused', 'paused_no_credits', 'paused_threshold', 'completed', 'stopped', 'cancelled'];

function executionStatusCheck(statuses: string[]): string {
  return `alter table "executions" add constraint "executions_status_check" check ("status" in (${statuses.map((status) => `'${status}'`).join(', ')}));`;
}

export class Migration20270101100000 extends Migration {
  override name = 'Migration20270101100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "contact_imports" drop constraint "contact_imports_status_check";`);
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_status_check" check ("status" in ('awaiting_file', 'queued', 'running', 'cancelling', 'completed', 'failed', 'cancelled'));`,
    );
    this.addSql(`drop index "contact_imports_waiting_index";`);
    this.addSql(`create index "contact_imports_waiting_index" on "contact_imports" ("created_at") where "status" in ('queued', 'running', 'cancelling');`);
    this.addSql(`alter table "executions" drop constraint "executions_status_check";`);
    this.addSql(executionStatusCheck(['preparing', ...EXECUTION_STATUSES]));
    this.addSql(`alter table "executions" add "snapshot_after" uuid null;`);
    for (const [, index] of REDUNDANT_INDEXES) this.addSql(`drop index "${index}";`);
    this.listRowCounts();
  }

  private listRowCounts(): void {
    this.addSql(
      `create table "list_row_counts" ("organization_id" uuid not null references "organizations" ("id") on delete cascade, "list" text not null, "scope_id" uuid not null, "rows" bigint not null);`,
    );
    this.addSql(`create index "list_row_counts_scope_id_list_index" on "list_row_counts" ("scope_id", "list");`);
    // tg_argv[0]: the list; its owner is the organization.
    this.addSql(`create function list_rows_counted() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into list_row_counts (organization_id, list, scope_id, rows)
            select organization_id, tg_argv[0], organization_id, count(*) from inserted group by organization_id;
        else
          insert into list_row_counts (organization_id, list, scope_id, rows)
            select organization_id, tg_argv[0], organization_id, -count(*) from deleted group by organization_id;
        end if;
        return null;
      end $$;`);
    // Calls are counted by organization and by execution (a call's execution_id is set when it is made, never changed).
    this.addSql(`create function calls_rows_counted() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into list_row_counts (organization_id, list, scope_id, rows)
            select organization_id, 'calls', organization_id, count(*) from inserted group by organization_id
            union all
            select organization_id, 'calls.execution', execution_id, count(*) from inserted where execution_id is not null group by organization_id, execution_id;
        else
          insert into list_row_counts (organization_id, list, scope_id, rows)
            select organization_id, 'calls', organization_id, -count(*) from deleted group by organization_id
            union all
            select organization_id, 'calls.execution', execution_id, -count(*) from deleted where execution_id is not null group by organization_id, execution_id;
        end if;
        return null;
      end $$;`);
    for (const [table, list] of [
      ['credit_ledger', 'credit_ledger'],
      ['events', 'events'],
    ]) {
      this.addSql(
        `insert into list_row_counts (organization_id, list, scope_id, rows) select organization_id, '${list}', organization_id, count(*) from "${table}" group by organization_id;`,
      );
      this.addSql(
        `create trigger ${table}_rows_counted_insert after insert on "${table}" referencing new table as inserted for each statement execute function list_rows_counted('${list}');`,
      );
      this.addSql(
        `create trigger ${table}_rows_counted_delete after delete on "${table}" referencing old table as deleted for each statement execute function list_rows_counted('${list}');`,
      );
    }
    this.addSql(
      `insert into list_row_counts (organization_id, list, scope_id, rows) select organization_id, 'calls', organization_id, count(*) from calls group by organization_id;`,
    );
    this.addSql(
      `insert into list_row_counts (organization_id, list, scope_id, rows) select organization_id, 'calls.execution', execution_id, count(*) from calls where execution_id is not null group by organization_id, execution_id;`,
    );
    this.addSql(
      `create trigger calls_rows_counted_insert after insert on "calls" referencing new table as inserted for each statement execute function calls_rows_counted();`,
    );
    this.addSql(
      `create trigger calls_rows_counted_delete after delete on "calls" referencing old table as deleted for each statement execute function calls_rows_counted();`,
    );
  }

  override down(): void | Promise<void> {
    for (const table of ['credit_ledger', 'events']) {
      this.addSql(`drop trigger ${table}_rows_counted_insert on "${table}"; drop trigger ${table}_rows_counted_delete on "${table}";`);
    }
    this.addSql(`drop trigger calls_rows_counted_insert on "calls"; drop trigger calls_rows_counted_delete on "calls";`);
    this.addSql(`drop function list_rows_counted(); drop function calls_rows_counted(); drop table "list_row_counts";`);
    for (const [table, index, columns] of REDUNDANT_INDEXES) {
      this.addSql(`create index "${index}" on "${table}" (${columns.map((column) => `"${column}"`).join(', ')});`);
    }
    this.addSql(`alter table "executions" drop column "snapshot_after";`);
    this.addSql(`update "executions" set "status" = 'cancelled' where "status" = 'preparing';`);
    this.addSql(`alter table "executions" drop constraint "executions_status_check";`);
    this.addSql(executionStatusCheck(EXECUTION_STATUSES));
    this.addSql(`update "contact_imports" set "status" = 'cancelled' where "status" = 'cancelling';`);
    this.addSql(`drop index "contact_imports_waiting_index";`);
    this.addSql(`create index "contact_imports_waiting_index" on "contact_imports" ("created_at") where "status" in ('queued', 'running');`);
    this.addSql(`alter table "contact_imports" drop constraint "contact_imports_status_check";`);
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_status_check" check ("status" in ('awaiting_file', 'queued', 'running', 'completed', 'failed', 'cancelled'));`,
    );
  }
}
