import { Migration } from '@mikro-orm/migrations';

/**
 * Issue #42, lists that stay fast: an index ending in `id` under the default order of every list that
 * pages by cursor, so that the keyset seek `(sort column, id) < (?, ?)` of a list's page (src/db/keyset.ts),
 * scoped by the list's owner (the organization, or the parent: a program, a conversation, an endpoint,
 * a base, the caller's user), is an index range scan that stops after `limit` rows, at the last page as
 * at the first. The indexes they extend (`(organization_id, created_at)`, `(program_id, created_at)`, …)
 * are kept: the entities declare them, and a later migration may drop the ones a plan no longer uses.
 */
const KEYSET_INDEXES: [table: string, columns: string[]][] = [
  ['api_keys', ['user_id', 'created_at', 'id']],
  ['business_entities', ['organization_id', 'created_at', 'id']],
  ['call_flows', ['organization_id', 'created_at', 'id']],
  ['calls', ['organization_id', 'created_at', 'id']],
  ['calls', ['execution_id', 'created_at', 'id']],
  ['carrier_connections', ['organization_id', 'created_at', 'id']],
  ['contact_triggers', ['program_id', 'trigger_at', 'id']],
  ['conversations', ['agent_id', 'created_at', 'id']],
  ['credit_ledger', ['organization_id', 'created_at', 'id']],
  ['do_not_call_entries', ['organization_id', 'created_at', 'id']],
  ['events', ['organization_id', 'created_at', 'id']],
  ['executions', ['program_id', 'created_at', 'id']],
  ['knowledge_bases', ['organization_id', 'created_at', 'id']],
  ['knowledge_documents', ['knowledge_base_id', 'created_at', 'id']],
  ['mcp_servers', ['organization_id', 'created_at', 'id']],
  ['messages', ['conversation_id', 'sequence', 'id']],
  ['programs', ['organization_id', 'created_at', 'id']],
  ['teams', ['organization_id', 'created_at', 'id']],
  ['tool_calls', ['conversation_id', 'sequence', 'id']],
  ['tools', ['organization_id', 'created_at', 'id']],
  ['users', ['organization_id', 'created_at', 'id']],
  ['webhook_deliveries', ['endpoint_id', 'created_at', 'id']],
  ['webhook_endpoints', ['organization_id', 'created_at', 'id']],
];

/** `<table>_<columns>_keyset` (at most 56 characters: PostgreSQL cuts names at 63). */
function indexName(table: string, columns: string[]): string {
  return `${table}_${columns.join('_')}_keyset`;
}

export class Migration20261231400000 extends Migration {
  override name = 'Migration20261231400000';

  override up(): void | Promise<void> {
    for (const [table, columns] of KEYSET_INDEXES) {
      this.addSql(`create index "${indexName(table, columns)}" on "${table}" (${columns.map((column) => `"${column}"`).join(', ')});`);
    }
  }

  override down(): void | Promise<void> {
    for (const [table, columns] of KEYSET_INDEXES) this.addSql(`drop index "${indexName(table, columns)}";`);
  }
}
