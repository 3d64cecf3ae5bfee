import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpClientMessageProblem } from '../support/mcp-spec.js';

/** A tool the double lists: its raw JSON Schema (any schema, hostile ones included), and what a call answers. */
export interface DoubleTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  answer: (
    args: Record<string, unknown>,
  ) =>
    | { text: string; isError?: boolean; structured?: Record<string, unknown> }
    | Promise<{ text: string; isError?: boolean; structured?: Record<string, unknown> }>;
}

/**
 * An MCP server on loopback built with the official SDK's own server (McpServer, its Streamable HTTP
 * transport, stateless: a server per request), listing raw JSON Schemas so a test can list hostile
 * ones. Every JSON-RPC message the gateway sends is checked against the protocol's published schema
 * (test/support/mcp.schemas.json), closed to unknown keys; `problems` keeps what failed. `auth`, when
 * set, is the header value every request must carry (401 otherwise).
 */
export class McpDouble {
  tools: DoubleTool[] = [];
  auth: { name: string; value: string } | null = null;
  readonly calls: { name: string; arguments: Record<string, unknown> }[] = [];
  readonly problems: { message: unknown; problem: string }[] = [];
  readonly methods: string[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
    return this;
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    if (this.auth && req.headers[this.auth.name.toLowerCase()] !== this.auth.value) {
      res.writeHead(401).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body: unknown = text ? JSON.parse(text) : undefined;
    for (const message of Array.isArray(body) ? body : body ? [body] : []) {
      const problem = mcpClientMessageProblem(message);
      if (problem) this.problems.push({ message, problem });
      if (typeof (message as { method?: unknown }).method === 'string') this.methods.push((message as { method: string }).method);
    }
    const mcp = new McpServer({ name: 'business-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: this.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as { type: 'object' } })),
    }));
    mcp.server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = this.tools.find((each) => each.name === request.params.name);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      this.calls.push({ name: request.params.name, arguments: args });
      if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
      const answer = await tool.answer(args);
      return {
        content: [{ type: 'text', text: answer.text }],
        ...(answer.isError ? { isError: true } : {}),
        ...(answer.structured ? { structuredContent: answer.structured } : {}),
      };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
