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
  }

  override down(): void | Promise<void> {
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
