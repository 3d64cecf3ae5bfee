import type { Agent } from './agent.entity.js';
import type { Conversation } from './conversation.entity.js';
import type { Message } from './message.entity.js';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** agent.activated / agent.archived: the agent's REST fields that tell its state (no instructions or policy). */
export function agentPayload(agent: Agent): Record<string, unknown> {
  return {
    id: agent.id,
    organizationId: agent.organization.id,
    name: agent.name,
    description: agent.description,
    status: agent.status,
    version: agent.version,
    createdAt: iso(agent.createdAt),
    updatedAt: iso(agent.updatedAt),
    deletedAt: iso(agent.deletedAt),
  };
}

/** conversation.message: the message as REST shows it, with its conversation and agent. */
export function messagePayload(message: Message, agentId: string): Record<string, unknown> {
  return {
    id: message.id,
    conversationId: message.conversation.id,
    agentId,
    sequence: message.sequence,
    role: message.role,
    content: message.content,
    model: message.model,
    usage: message.usage,
    createdAt: iso(message.createdAt),
  };
}

/** conversation.ended: the conversation as REST shows it (without its messages), with the resolution outcome. */
export function conversationPayload(conversation: Conversation): Record<string, unknown> {
  return {
    id: conversation.id,
    organizationId: conversation.organization.id,
    agentId: conversation.agent.id,
    callId: conversation.callId,
    title: conversation.title,
    status: conversation.status,
    outcome: conversation.outcome,
    messageCount: conversation.messageCount,
    createdAt: iso(conversation.createdAt),
    updatedAt: iso(conversation.updatedAt),
    endedAt: iso(conversation.endedAt),
  };
}
