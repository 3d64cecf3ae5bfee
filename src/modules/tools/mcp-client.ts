// Types only here: the SDK loads with the first MCP server the gateway talks to.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PACKAGE_VERSION } from '../../common/package-info.js';
import { OutboundError, guardedFetch, toldOf } from './outbound-request.js';
import { parametersProblem } from './tool-checks.js';
import { TOOL_LIMITS, toolNameProblem } from './tool-limits.js';
import type { McpServerTool } from './mcp-server.entity.js';

/** How long listing a server's tools may take, and the largest answer the gateway reads of one MCP message. */
export const MCP_LIMITS = { listTimeoutMs: 10_000, answerBytes: 1_048_576 } as const;

export interface McpTarget {
  url: string;
  /** The auth header, opened. */
  auth: { name: string; value: string } | null;
  allowPrivate: boolean;
}

/**
 * The SDK validates a tool's structured output against its outputSchema with an ajv of its own: a
 * schema the server wrote, compiled with no bound. The gateway does not validate answers (the model
 * reads them), so the SDK is given a validator that compiles nothing.
 */
const NO_OUTPUT_VALIDATION = { getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }) };

/** Why an MCP exchange failed, in words a tenant (and its model) may be told. */
export function mcpFailure(error: unknown, deadline: AbortSignal, timeoutMs: number): string {
  if (deadline.aborted) return `the MCP server did not answer within ${timeoutMs} ms`;
  for (let current = error, depth = 0; current && depth < 6; depth++) {
    if (current instanceof OutboundError)
      return current.kind === 'refused'
        ? `the MCP server's address was refused (${current.message.replace(/^Refused: /, '')})`
        : toldOf('the MCP server', current);
    current = (current as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `the MCP server's answer is not one the gateway reads (${message.replace(/\s+/g, ' ').slice(0, 200)})`;
}

/**
 * One MCP session for one operation, through the official SDK's Streamable HTTP client: every
 * request of it goes through guardedFetch (the address rules, one deadline, a size cap per answer),
 * and it is closed after. `work` gets the connected client.
 */
export async function withMcpClient<T>(target: McpTarget, timeoutMs: number, deadline: AbortSignal, work: (client: Client) => Promise<T>): Promise<T> {
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    fetch: guardedFetch({ allowPrivate: target.allowPrivate, deadline, maxBytes: MCP_LIMITS.answerBytes }),
    requestInit: target.auth ? { headers: { [target.auth.name]: target.auth.value } } : undefined,
  });
  const client = new Client({ name: 'telephony-agent-gateway', version: PACKAGE_VERSION }, { capabilities: {}, jsonSchemaValidator: NO_OUTPUT_VALIDATION });
  try {
    await client.connect(transport, { signal: deadline, timeout: timeoutMs });
    return await work(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * The server's tools as the gateway keeps them: each name and input schema checked as an HTTP
 * tool's are (the same bounded check), a refused one kept with its reason and no schema; at most
 * TOOL_LIMITS.mcpToolsPerServer, over pages of the list.
 */
export async function listMcpTools(target: McpTarget): Promise<{ tools: McpServerTool[] } | { error: string }> {
  const deadline = AbortSignal.timeout(MCP_LIMITS.listTimeoutMs);
  try {
    return { tools: await readTools(target, deadline) };
  } catch (error) {
    return { error: mcpFailure(error, deadline, MCP_LIMITS.listTimeoutMs) };
  }
}

async function readTools(target: McpTarget, deadline: AbortSignal): Promise<McpServerTool[]> {
  return withMcpClient(target, MCP_LIMITS.listTimeoutMs, deadline, async (client) => {
    const listed: { name: unknown; description?: unknown; inputSchema?: unknown }[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { signal: deadline, timeout: MCP_LIMITS.listTimeoutMs });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && listed.length < TOOL_LIMITS.mcpToolsPerServer);
    const tools: McpServerTool[] = [];
    for (const tool of listed.slice(0, TOOL_LIMITS.mcpToolsPerServer)) {
      const name = String(tool.name).slice(0, 64);
      const description = typeof tool.description === 'string' ? tool.description.slice(0, 1000) : null;
      const nameProblem = toolNameProblem(name);
      const schemaProblem = nameProblem ? null : await parametersProblem(tool.inputSchema);
      const refused = nameProblem ? `its name ${nameProblem}` : schemaProblem ? `its inputSchema ${schemaProblem}` : null;
      tools.push({ name, description, inputSchema: refused ? null : (tool.inputSchema as Record<string, unknown>), refused });
    }
    return tools;
  });
}

/** What a tools/call came back with: its text (and structured content), or the error it reported. */
export interface McpAnswer {
  ok: boolean;
  answer: unknown;
  text: string | null;
  error: string | null;
}

/** The text of a result's content: text parts as they are, anything else named by its type. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown }) =>
      part?.type === 'text' && typeof part.text === 'string' ? part.text : `[${String(part?.type ?? 'content')}]`,
    )
    .join('\n');
}

/** Calls one tool through the SDK (tools/call) under the tool call's deadline; never throws. */
export async function callMcpTool(target: McpTarget, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<McpAnswer> {
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await withMcpClient(target, timeoutMs, deadline, async (client) => {
      const result = await client.callTool({ name, arguments: args }, undefined, { signal: deadline, timeout: timeoutMs });
      const text = contentText(result.content);
      if (result.isError) return { ok: false, answer: null, text, error: `the MCP tool reported an error: ${text.slice(0, 500) || 'no details'}` };
      return {
        ok: true,
        answer: result.structuredContent ?? text,
        text: result.structuredContent ? JSON.stringify(result.structuredContent) : text,
        error: null,
      };
    });
  } catch (error) {
    return { ok: false, answer: null, text: null, error: mcpFailure(error, deadline, timeoutMs) };
  }
}
