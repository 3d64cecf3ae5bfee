import type { TenantSchemaLimits } from '../../common/tenant-json-schema.js';
import { TENANT_FORMATS } from '../../common/tenant-schema-ajv.js';

/** A tool's name, as the models take it (OpenAI, Gemini and the MCP schema agree on this much). */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Names no tool of an organization may take: the built-in tools of every call (call-tools.ts) and
 * the ones the next built-ins will have (transfer to a person, keypad digits).
 */
export const RESERVED_TOOL_NAMES = ['end_call', 'reach_resolution', 'opt_out', 'transfer_call', 'send_digits'] as const;

/** Why a name cannot be a tool's, or null. */
export function toolNameProblem(name: string): string | null {
  if (!TOOL_NAME.test(name)) return 'must be 1 to 64 letters, digits, underscores or hyphens';
  if ((RESERVED_TOOL_NAMES as readonly string[]).includes(name)) return `is the name of a built-in tool (${RESERVED_TOOL_NAMES.join(', ')} are taken)`;
  return null;
}

/**
 * What a tool call may cost the gateway, and what it keeps (docs/tools.md#limits): the tool's
 * answer is read up to `answerBytes` and the connection closed beyond; the model is given at most
 * `modelChars` of it, the record keeps `recordChars`.
 */
export const TOOL_LIMITS = {
  /** The default and the largest timeoutMs: one deadline over the whole exchange (connect, send, every byte of the answer). */
  defaultTimeoutMs: 5_000,
  maxTimeoutMs: 30_000,
  answerBytes: 65_536,
  modelChars: 8_000,
  recordChars: 4_000,
  /** The arguments a model writes, as JSON. */
  argumentsChars: 16_000,
  /** Headers a tool sends, and the length of a value. */
  headers: 10,
  headerValueChars: 2_048,
  /** Tools an organization holds, MCP servers it registers, tools an agent lists. */
  toolsPerOrganization: 100,
  mcpServersPerOrganization: 20,
  toolsPerAgent: 32,
  /** Tools an MCP server may list (more are left out, with a reason). */
  mcpToolsPerServer: 100,
  /** Model steps in one reply: calls, their answers, then words; past it the model answers with what it has. */
  maxSteps: 4,
} as const;

/** The bounds of a tool's parameters (the shared tenant check, with a tool's own limits). */
export const TOOL_SCHEMA_LIMITS: TenantSchemaLimits = {
  maxDepth: 5,
  maxItems: 100,
  maxStringLength: 2_000,
  maxProperties: 50,
  maxSmallestValue: 500,
  maxPatternLength: 200,
  formats: TENANT_FORMATS,
};

/** The largest parameters schema, as JSON. */
export const MAX_PARAMETERS_CHARS = 20_000;

/** Headers a tool may not set: the signature's, and what the request itself decides. */
export const RESERVED_HEADERS = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
]);

/** An HTTP header's name (RFC 9110 token), at most 64 characters. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
