import { createPageType } from '../../common/pagination.js';
import { McpServer } from './mcp-server.entity.js';
import { ToolCall } from './tool-call.entity.js';
import { Tool } from './tool.entity.js';

export const ToolPage = createPageType(Tool, 'ToolPage');
export const McpServerPage = createPageType(McpServer, 'McpServerPage');
export const ToolCallPage = createPageType(ToolCall, 'ToolCallPage');
