import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { closeSchemas } from './closed-schema.js';
import addFormats from 'ajv-formats';

// The Model Context Protocol's messages as the protocol publishes them (test/support/mcp.schemas.json,
// vendored from modelcontextprotocol/modelcontextprotocol: see mcp.schemas.md), checked the way a
// strict server checks them: every schema that lists its properties is closed to other keys.

type Json = Record<string, unknown>;

const vendored = JSON.parse(readFileSync(new URL('./mcp.schemas.json', import.meta.url), 'utf8')) as {
  source: Json;
  roots: string[];
  $defs: Record<string, Json>;
};

/** Where the schemas come from (repository, path and commit), for messages. */
export const MCP_SPEC_SOURCE = vendored.source;

const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats.default(ajv);
ajv.addSchema({ $id: 'mcp', $defs: closeSchemas(vendored.$defs) as Json });

const METHODS: Record<string, string> = {
  initialize: 'InitializeRequest',
  'notifications/initialized': 'InitializedNotification',
  'tools/list': 'ListToolsRequest',
  'tools/call': 'CallToolRequest',
  ping: 'PingRequest',
  'notifications/cancelled': 'CancelledNotification',
};
const validators = new Map<string, ValidateFunction>();

/** Why a message a client sent is not one the protocol allows (or one the gateway has no business sending), or null. */
export function mcpClientMessageProblem(message: unknown): string | null {
  const method = message && typeof message === 'object' ? (message as Json).method : undefined;
  if (typeof method !== 'string') return 'a client message without a method (the gateway answers no server request)';
  const root = METHODS[method];
  if (!root) return `the client sent ${method}, which the gateway has no reason to send`;
  let validate = validators.get(root);
  if (!validate) validators.set(root, (validate = ajv.getSchema(`mcp#/$defs/${root}`)!));
  if (validate(message)) return null;
  const [first] = validate.errors ?? [];
  return `${root}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}${first?.params ? ` ${JSON.stringify(first.params)}` : ''}`;
}
