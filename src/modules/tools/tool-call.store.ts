import type { EntityManager } from '@mikro-orm/postgresql';
import { at, query } from '../../db/sql.js';
import { EventWriter } from '../events/event-writer.js';
import type { ToolCallStatus, ToolSource } from './tool-call.entity.js';

/** One tool call as it is recorded and shown (REST, GraphQL, the tool.called event). */
export interface ToolCallRecord {
  id: string;
  organizationId: string;
  conversationId: string | null;
  agentId: string;
  callId: string | null;
  /** Set once stored: its place among the conversation's tool calls, and the message it came after. */
  sequence: number;
  afterSequence: number;
  tool: string;
  source: ToolSource;
  toolId: string | null;
  arguments: unknown;
  status: ToolCallStatus;
  statusCode: number | null;
  durationMs: number;
  answer: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  id: string;
  organization_id: string;
  conversation_id: string;
  agent_id: string;
  call_id: string | null;
  sequence: number;
  after_sequence: number;
  tool: string;
  source: ToolSource;
  tool_id: string | null;
  arguments: unknown;
  status: ToolCallStatus;
  status_code: number | null;
  duration_ms: number;
  answer: string | null;
  error: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

function record(row: Row): ToolCallRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    conversationId: row.conversation_id,
    agentId: row.agent_id,
    callId: row.call_id,
    sequence: Number(row.sequence),
    afterSequence: Number(row.after_sequence),
    tool: row.tool,
    source: row.source,
    toolId: row.tool_id,
    arguments: typeof row.arguments === 'string' ? JSON.parse(row.arguments) : row.arguments,
    status: row.status,
    statusCode: row.status_code,
    durationMs: Number(row.duration_ms),
    answer: row.answer,
    error: row.error,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** tool.called: the call as REST shows it. */
export function toolCallPayload(call: ToolCallRecord): Record<string, unknown> {
  const { organizationId: _organizationId, updatedAt: _updatedAt, createdAt, ...shown } = call;
  return { ...shown, createdAt: createdAt.toISOString() };
}

/**
 * Where tool calls are kept: each in its conversation's order (the conversation row numbers them, in
 * the transaction of the insert, and the message count then is the one it follows), its
 * tool.called event in the same transaction.
 */
export class ToolCallStore {
  constructor(private readonly em: EntityManager) {}

  /** Stores a call of a conversation and writes its event; the record comes back numbered. A conversation gone since stores nothing. */
  async store(call: ToolCallRecord): Promise<ToolCallRecord | null> {
    if (!call.conversationId) return null;
    return this.em.fork().transactional(async (tx) => {
      const now = at(call.createdAt);
      const [row] = await query<Row>(
        tx as EntityManager,
        `with c as (update conversations set tool_call_count = tool_call_count + 1, updated_at = now() where id = ? and organization_id = ? returning tool_call_count, message_count)
         insert into tool_calls (id, created_at, updated_at, organization_id, conversation_id, agent_id, call_id, sequence, after_sequence, tool, source, tool_id, arguments, status, status_code, duration_ms, answer, error)
         select ?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, c.tool_call_count, c.message_count, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ? from c
         returning *`,
        [
          call.conversationId,
          call.organizationId,
          call.id,
          now,
          now,
          call.organizationId,
          call.conversationId,
          call.agentId,
          call.callId,
          call.tool,
          call.source,
          call.toolId,
          call.arguments === null ? null : JSON.stringify(call.arguments),
          call.status,
          call.statusCode,
          call.durationMs,
          call.answer,
          call.error,
        ],
      );
      if (!row) return null;
      const stored = record(row);
      await EventWriter.write(tx as EntityManager, { organizationId: call.organizationId, type: 'tool.called', payload: toolCallPayload(stored) });
      return stored;
    });
  }
}
