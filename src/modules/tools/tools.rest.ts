import { CursorPageArgs, PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import type { McpServerService } from './mcp-server.service.js';
import type { ToolCallService } from './tool-call.service.js';
import type { ToolService } from './tool.service.js';
import { CreateMcpServerInput, CreateToolInput, UpdateMcpServerInput, UpdateToolInput } from './tool.inputs.js';

/** The services this route table calls. */
export type RouteServices = { tools: ToolService; mcpServers: McpServerService; toolCalls: ToolCallService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Tools';
const REQUEST =
  'When the model calls the tool, its arguments are validated against parameters (a violation goes back to the model; nothing is sent), then one request goes to url: ' +
  'JSON body {tool, arguments, call: {id, direction, from, to}, contact: {id, name, phone, attributes}, conversationId, agentId}, signed per Standard Webhooks with the tool’s own secret ' +
  '(webhook-id is the tool call’s id), under one deadline of timeoutMs; redirects are not followed; at most 64 KiB of the answer is read (docs/tools.md).';

/** HTTP tools, MCP servers, and the record of the calls. */
export const toolRoutes = [
  defineRoute({
    method: 'get',
    path: '/tools',
    operationId: 'listTools',
    summary: 'A page of the organization’s HTTP tools: {data, meta}; search matches the name or the description',
    description: 'sortBy is createdAt, updatedAt or name. Header values and secrets are never shown, only headerNames and secretHint.',
    tag: TAG,
    query: PageArgs,
    response: ref('ToolPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('ToolPage', await services.tools.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/tools',
    operationId: 'createTool',
    summary: 'Define an HTTP tool; the answer holds its signing secret (whsec_…), shown only here',
    description:
      `${REQUEST} The name is unique in the organization (409 otherwise) and not a built-in’s; parameters is a bounded JSON Schema of type object (400 otherwise); ` +
      'the URL must be https and resolve only to public addresses (400 otherwise; http and private addresses only with TOOLS_ALLOW_PRIVATE=true). Needs CREDENTIALS_KEY (409 otherwise); at most 100 tools per organization.',
    tag: TAG,
    body: CreateToolInput,
    status: 201,
    response: ref('ToolWithSecret'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('ToolWithSecret', await services.tools.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/tools/{id}',
    operationId: 'getTool',
    summary: 'Read an HTTP tool (never its header values or secret)',
    tag: TAG,
    response: ref('Tool'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Tool', await services.tools.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/tools/{id}',
    operationId: 'updateTool',
    summary: 'Change the fields that are sent, each checked as on create; headers, when sent, replace them all',
    tag: TAG,
    body: UpdateToolInput,
    response: ref('Tool'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('Tool', await services.tools.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/tools/{id}',
    operationId: 'deleteTool',
    summary: 'Delete an HTTP tool: 409 naming the agents (not archived) whose toolIds list it; archived agents have it taken off',
    tag: TAG,
    status: 204,
    errors: [403, 404, 409],
    async handler({ actor, params, services }) {
      await services.tools.delete(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/tools/{id}/rotate-secret',
    operationId: 'rotateToolSecret',
    summary: 'A new signing secret, shown only in this answer; the old one keeps signing alongside it for 24 hours',
    tag: TAG,
    response: ref('ToolWithSecret'),
    errors: [403, 404, 409],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('ToolWithSecret', await services.tools.rotateSecret(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/mcp-servers',
    operationId: 'listMcpServers',
    summary: 'A page of the organization’s MCP servers with the tools each listed: {data, meta}',
    tag: TAG,
    query: PageArgs,
    response: ref('McpServerPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.present('McpServerPage', await services.mcpServers.list(actor, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/mcp-servers',
    operationId: 'createMcpServer',
    summary: 'Register an MCP server (Streamable HTTP); its tools are listed at once',
    description:
      'The URL follows the tools’ address rules. A server that is down, or answers what is not MCP, is kept with status unavailable and lastError; each listed tool whose name or input schema the gateway refuses is kept with its reason (refused) and offered to no agent. ' +
      'Its tools are listed again on POST /api/mcp-servers/{id}/refresh and once MCP_TOOLS_REFRESH_MS (default 10 minutes) old when an agent uses them.',
    tag: TAG,
    body: CreateMcpServerInput,
    status: 201,
    response: ref('McpServer'),
    errors: [403, 409],
    async handler({ actor, body, services, presenter }) {
      return presenter.present('McpServer', await services.mcpServers.create(actor, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/mcp-servers/{id}',
    operationId: 'getMcpServer',
    summary: 'Read an MCP server and its listed tools (never its auth header’s value)',
    tag: TAG,
    response: ref('McpServer'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('McpServer', await services.mcpServers.get(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/mcp-servers/{id}',
    operationId: 'updateMcpServer',
    summary: 'Change the fields that are sent; a new URL or auth lists its tools again',
    tag: TAG,
    body: UpdateMcpServerInput,
    response: ref('McpServer'),
    errors: [403, 404, 409],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('McpServer', await services.mcpServers.update(actor, params.id!, body));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/mcp-servers/{id}',
    operationId: 'deleteMcpServer',
    summary: 'Delete an MCP server; agents that name it are offered none of its tools',
    tag: TAG,
    status: 204,
    errors: [403, 404],
    async handler({ actor, params, services }) {
      await services.mcpServers.delete(actor, params.id!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/mcp-servers/{id}/refresh',
    operationId: 'refreshMcpServer',
    summary: 'List the server’s tools again now',
    tag: TAG,
    response: ref('McpServer'),
    errors: [403, 404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('McpServer', await services.mcpServers.refresh(actor, params.id!));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/{id}/tool-calls',
    operationId: 'listConversationToolCalls',
    summary:
      'A page of the tools the conversation’s agent called, in order: {data, meta}; afterSequence places each among GET /api/conversations/{id}/messages',
    tag: 'Agents',
    query: CursorPageArgs,
    response: ref('ToolCallPage'),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      return presenter.present('ToolCallPage', await services.toolCalls.page(actor, params.id!, query));
    },
  }),
];
