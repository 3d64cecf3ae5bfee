import type { CallContext } from '../agents/templates/call-context.js';
import type { ToolCallRecord } from './tool-call.store.js';

/** Who is calling, for one conversation turn (or a test message): what the tools are told, and what they must not say. */
export interface ToolSession {
  organizationId: string;
  agentId: string;
  conversationId: string | null;
  callId: string | null;
  /** The conversation's context (toolRequestContext of it is the request's call, contact, conversation and agent). */
  context: CallContext | null;
  /** The policy as rendered for the conversation (renderedPrompt().guardPolicy): arguments that say it are not sent. */
  guardPolicy: string | null;
  /** What the person said so far: never judged as the policy (prompt.ts, saysPolicy). */
  callerSaid: () => readonly string[];
  /** Told each call once it is over: the text path stores it at once, a call's pipeline in its queue of writes. */
  onRecord(record: ToolCallRecord): void | Promise<void>;
}

/** What an agent lists: its HTTP tools by id, and tools of its MCP servers by name. */
export interface AgentToolChoice {
  toolIds: string[];
  mcpTools: { serverId: string; names: string[] }[];
}
