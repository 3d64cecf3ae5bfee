import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { pageMeta, type Page, type PageOnlyArgs } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { query } from '../../db/sql.js';
import { ToolCallStore, type ToolCallRecord } from './tool-call.store.js';

/** The record of what agents did: a conversation's tool calls, in order, on both doors. */
export class ToolCallService {
  private readonly store: ToolCallStore;

  constructor(private readonly em: EntityManager) {
    this.store = new ToolCallStore(em);
  }

  /** A page of a conversation's tool calls, in order (404 for a conversation that is not the actor's). */
  async page(actor: Actor, conversationId: string, args: PageOnlyArgs): Promise<Page<ToolCallRecord>> {
    const [found] = isUuid(conversationId)
      ? await query<{ id: string }>(this.em, 'select id from conversations where id = ? and organization_id = ?', [conversationId, actor.organizationId])
      : [];
    if (!found) throw AppError.notFound('Conversation');
    return (await this.pagesFor(actor, [conversationId], args)).get(conversationId)!;
  }

  /** A page per conversation in one statement (Conversation.toolCalls, batched). */
  async pagesFor(actor: Actor, conversationIds: readonly string[], args: PageOnlyArgs): Promise<Map<string, Page<ToolCallRecord>>> {
    const ids = conversationIds.filter(isUuid);
    const read = await this.store.pagesFor(actor.organizationId, ids, args.page, args.limit);
    const empty = ids.filter((id) => read.get(id)!.data.length === 0);
    const totals = new Map<string, number>();
    if (empty.length > 0 && args.page > 1) {
      const rows = await query<{ conversation_id: string; total: number }>(
        this.em,
        `select conversation_id, count(*)::int as total from tool_calls where organization_id = ? and conversation_id in (${empty.map(() => '?').join(', ')}) group by conversation_id`,
        [actor.organizationId, ...empty],
      );
      for (const row of rows) totals.set(row.conversation_id, Number(row.total));
    }
    return new Map(
      conversationIds.map((id) => {
        const entry = read.get(id) ?? { data: [], total: 0 };
        return [id, { data: entry.data, meta: pageMeta(args.page, args.limit, entry.data.length > 0 ? entry.total : (totals.get(id) ?? 0)) }];
      }),
    );
  }
}
