import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { at, query } from '../../../db/sql.js';
import { Agent } from '../../agents/agent.entity.js';
import { ConversationStatus, MessageRole } from '../../agents/agent.enums.js';
import type { ChatMessage } from '../../agents/agent.ports.js';
import type { CriterionOutcome } from '../../agents/agent.types.js';
import type { CallTurnLatency } from '../../telephony/call-latency.types.js';
import { memoryWindow } from '../../agents/prompt.js';
import { PENDING_ANALYSIS } from '../../agents/analysis/analysis-worker.js';
import { contextFor, type CallContext } from '../../agents/templates/call-context.js';
import { answeredAt, callContext, readCallSource } from '../../agents/templates/call-context-reader.js';

/**
 * The conversation a speech-to-speech call is stored as: opened when the media stream starts
 * (and linked from `calls.conversation_id`), one message per spoken turn, the resolutions the
 * agent reached, and its end. Written with the same sequence rule as typed messages: the next
 * number is taken from the conversation row in the transaction of the insert.
 */
export class CallConversations {
  constructor(
    private readonly em: EntityManager,
    /** Told when a conversation is left due for analysis (the analysis worker's nudge). */
    private readonly analysisDue: () => void = () => {},
  ) {}

  /** The call's agent, when it belongs to the call's organization. */
  async agent(organizationId: string, agentId: string): Promise<Agent | null> {
    return this.em.fork().findOne(Agent, { id: agentId, organization: organizationId });
  }

  /**
   * What the call's agent knows of it (its templates' context: the call, the contact, the program,
   * the variables), and when the call was answered (the first message's latency runs from there).
   * A conversation the call already has keeps the context it was opened with.
   */
  async callContext(organizationId: string, callId: string, agent: Agent): Promise<{ context: CallContext | null; answeredAt: Date | null }> {
    const em = this.em.fork();
    const source = await readCallSource(em, organizationId, callId);
    if (!source) return { context: null, answeredAt: null };
    const [kept] = await query<{ context: CallContext | string | null }>(
      em,
      'select v.context from calls c join conversations v on v.id = c.conversation_id where c.id = ?',
      [callId],
    );
    const stored = kept?.context ? (typeof kept.context === 'string' ? (JSON.parse(kept.context) as CallContext) : kept.context) : null;
    const context = stored ? contextFor(agent, stored) : callContext(source, agent, null);
    return { context, answeredAt: answeredAt(source) };
  }

  /** The call's conversation: the one it already names, or a new active one with its agent and its context. */
  async open(callId: string, organizationId: string, agentId: string, title: string, context: CallContext | null = null): Promise<string> {
    return this.em.fork().transactional(async (tx) => {
      const [call] = await query<{ conversation_id: string | null }>(tx as EntityManager, 'select conversation_id from calls where id = ? for update', [
        callId,
      ]);
      if (call?.conversation_id) return call.conversation_id;
      const id = randomUUID();
      const now = at(new Date());
      await query(
        tx as EntityManager,
        `insert into conversations (id, created_at, updated_at, organization_id, agent_id, status, title, message_count, call_id, context)
         values (?, ?::timestamptz, ?::timestamptz, ?, ?, 'active', ?, 0, ?, ?::jsonb)`,
        [id, now, now, organizationId, agentId, title.slice(0, 255), callId, context ? JSON.stringify({ ...context, conversationId: id }) : null],
      );
      await query(tx as EntityManager, 'update calls set conversation_id = ?, updated_at = ?::timestamptz where id = ?', [id, now, callId]);
      return id;
    });
  }

  /** Appends one spoken turn; `backChannel`: the caller's "mhm" said while the agent spoke (not cut, not answered). */
  async add(
    conversationId: string,
    organizationId: string,
    role: MessageRole,
    content: string,
    model: string | null = null,
    backChannel = false,
  ): Promise<void> {
    await this.em.fork().transactional(async (tx) => {
      const [row] = await query<{ message_count: number }>(
        tx as EntityManager,
        `update conversations set message_count = message_count + 1, updated_at = now(),
                status = case when status = 'pending' then 'active' else status end
          where id = ? returning message_count`,
        [conversationId],
      );
      if (!row) return;
      const now = at(new Date());
      await query(
        tx as EntityManager,
        `insert into messages (id, created_at, updated_at, organization_id, conversation_id, sequence, role, content, model, back_channel)
         values (?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?, ?, ?)`,
        [randomUUID(), now, now, organizationId, conversationId, Number(row.message_count), role, content, model, backChannel],
      );
    });
  }

  /** Records a resolution the agent reached (a later one with the same label replaces it). */
  async resolve(conversationId: string, outcome: CriterionOutcome): Promise<void> {
    await this.em.fork().transactional(async (tx) => {
      const [row] = await query<{ outcome: CriterionOutcome[] | string | null }>(
        tx as EntityManager,
        'select outcome from conversations where id = ? for update',
        [conversationId],
      );
      if (!row) return;
      const before: CriterionOutcome[] = typeof row.outcome === 'string' ? JSON.parse(row.outcome) : (row.outcome ?? []);
      const outcomes = [...before.filter((item) => item.label !== outcome.label), outcome];
      await query(tx as EntityManager, 'update conversations set outcome = ?::jsonb, updated_at = now() where id = ?', [
        JSON.stringify(outcomes),
        conversationId,
      ]);
    });
  }

  /**
   * Ends the conversation (ended, or failed when the call failed); a closed one stays as it is. An
   * ended one whose agent has an analysis plan is left due for analysis in the same statement, and
   * its call shows the analysis pending (both in one transaction), so a restart loses nothing.
   */
  async close(conversationId: string, status: ConversationStatus.ended | ConversationStatus.failed): Promise<void> {
    const pending = JSON.stringify(PENDING_ANALYSIS);
    const due = await this.em.fork().transactional(async (tx) => {
      const [row] = await query<{ call_id: string | null; analyze: boolean }>(
        tx as EntityManager,
        `update conversations c set status = ?, ended_at = now(), updated_at = now(),
                analysis = case when plan.planned then ?::jsonb else c.analysis end,
                analysis_due_at = case when plan.planned then now() else c.analysis_due_at end
           from (select a.id, ? = 'ended' and a.analysis_plan is not null
                        and (coalesce((a.analysis_plan->>'summary')::boolean, false) or jsonb_typeof(a.analysis_plan->'structuredData') = 'object') as planned
                   from agents a) plan
          where plan.id = c.agent_id and c.id = ? and c.status in ('pending', 'active')
          returning c.call_id, plan.planned as analyze`,
        [status, pending, status, conversationId],
      );
      if (!row?.analyze) return false;
      if (row.call_id) await query(tx as EntityManager, 'update calls set analysis = ?::jsonb, updated_at = now() where id = ?', [pending, row.call_id]);
      return true;
    });
    if (due) this.analysisDue();
  }

  /** The call's agent turn latency, once, as its media stream ends. */
  async recordTurnLatency(callId: string, latency: CallTurnLatency): Promise<void> {
    await query(this.em.fork(), 'update calls set turn_latency = ?::jsonb, first_audio_ms = ?, updated_at = now() where id = ?', [
      JSON.stringify(latency),
      latency.firstAudioMs,
      callId,
    ]);
  }

  /** The call's own conversation so far, in order (the caller's back-channels left out): what a session opened again is told. */
  async transcript(conversationId: string): Promise<ChatMessage[]> {
    const rows = await query<{ role: MessageRole; content: string }>(
      this.em.fork(),
      'select role, content from messages where conversation_id = ? and not back_channel order by sequence',
      [conversationId],
    );
    return rows.map((row) => ({ role: row.role, content: row.content }));
  }

  /**
   * The agent's memory on the phone: the last `lastMessages` turns of its earlier calls with the
   * same contact (none without memory, or for a call with no contact), oldest first; the caller's
   * back-channels are left out (they answered nothing).
   */
  async memory(agent: Agent, organizationId: string, contactId: string | null, conversationId: string | null): Promise<ChatMessage[]> {
    const window = memoryWindow(agent.memoryConfig);
    if (window === 0 || !contactId) return [];
    // `conversationId`: this call's own, left out; null for a call that has none yet (a prepared session: speech-preparation.ts).
    const rows = await query<{ role: MessageRole; content: string }>(
      this.em.fork(),
      `select m.role, m.content from messages m
         join calls c on c.conversation_id = m.conversation_id
        where c.organization_id = ? and c.contact_id = ? and c.agent_id = ?${conversationId ? ' and m.conversation_id <> ?' : ''} and not m.back_channel
        order by m.created_at desc, m.sequence desc limit ?`,
      [organizationId, contactId, agent.id, ...(conversationId ? [conversationId] : []), window],
    );
    return rows.reverse().map((row) => ({ role: row.role, content: row.content }));
  }
}
