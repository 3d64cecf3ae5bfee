/**
 * Every column that holds a value sealed under CREDENTIALS_KEY (platform/credentials.ts `seal`). The
 * start-up check, `credentials:check` and `credentials:reset` read this list, and a test holds it to
 * the database: a new `*_encrypted` column fails it until it is listed here with what a reset does.
 */
export interface SealedColumn {
  table: string;
  column: string;
  /** What the CLI calls the row, and the field of it the value is. */
  kind: 'webhookEndpoint' | 'carrierConnection' | 'tool' | 'mcpServer';
  field: 'secret' | 'previousSecret' | 'authToken' | 'webhookKey' | 'headers' | 'authHeader';
  /** The column shown beside the row's id so an operator knows it (a URL, a name). */
  label: string;
  /** How the start-up check names the values, when the key does not open them. */
  what: string;
  /**
   * What a reset does to a value the key does not open: a webhook endpoint gets a new signing secret
   * (the gateway made the old one; the receiver is given the new one), a secret before a rotation is
   * dropped (the current one signs alone), a carrier connection is removed (its auth token is the
   * carrier's: the organization connects the account again; its numbers stay, without a connection).
   * A tool's header values and an MCP server's auth header are the business's: they are cleared
   * (`clear`; the tool or server stays, and the organization sets them again).
   */
  reset: 'newSecret' | 'drop' | 'remove' | 'clear';
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'webhook_endpoints',
    column: 'secret_encrypted',
    kind: 'webhookEndpoint',
    field: 'secret',
    label: 'url',
    what: 'webhook endpoints’ signing secrets',
    reset: 'newSecret',
  },
  {
    table: 'webhook_endpoints',
    column: 'previous_secret_encrypted',
    kind: 'webhookEndpoint',
    field: 'previousSecret',
    label: 'url',
    what: 'webhook endpoints’ secrets before their last rotation',
    reset: 'drop',
  },
  {
    table: 'carrier_connections',
    column: 'auth_token_encrypted',
    kind: 'carrierConnection',
    field: 'authToken',
    label: 'name',
    what: 'carrier connections’ auth tokens',
    reset: 'remove',
  },
  {
    table: 'carrier_connections',
    column: 'webhook_key_encrypted',
    kind: 'carrierConnection',
    field: 'webhookKey',
    label: 'name',
    what: 'carrier connections’ webhook keys',
    reset: 'remove',
  },
  { table: 'tools', column: 'secret_encrypted', kind: 'tool', field: 'secret', label: 'name', what: 'HTTP tools’ signing secrets', reset: 'newSecret' },
  {
    table: 'tools',
    column: 'previous_secret_encrypted',
    kind: 'tool',
    field: 'previousSecret',
    label: 'name',
    what: 'HTTP tools’ secrets before their last rotation',
    reset: 'drop',
  },
  { table: 'tools', column: 'headers_encrypted', kind: 'tool', field: 'headers', label: 'name', what: 'HTTP tools’ header values', reset: 'clear' },
  { table: 'mcp_servers', column: 'auth_encrypted', kind: 'mcpServer', field: 'authHeader', label: 'name', what: 'MCP servers’ auth headers', reset: 'clear' },
];
