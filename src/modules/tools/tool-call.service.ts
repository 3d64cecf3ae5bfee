import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { pageMeta, type CursorPageArgs, type Page } from '../../common/pagination.js';
import { fixedOrderPage } from '../../db/keyset.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { readList } from '../../db/read-model.js';
import { isUuid } from '../../db/base.entity.js';
import { query } from '../../db/sql.js';
import { ToolCall } from './tool-call.entity.js';
import type { ToolCallRecord } from './tool-call.store.js';

/** The record of what agents did: a conversation's tool calls, in order, on both doors. */
export class ToolCallService {
  constructor(private readonly em: EntityManager) {}

  /** A page of a conversation's tool calls, in order (404 for a conversation that is not the actor's). */
  async page(actor: Actor, conversationId: string, args: CursorPageArgs): Promise<Page<ToolCallRecord>> {
    const [found] = isUuid(conversationId)
      ? await query<{ id: string }>(this.em, 'select id from conversations where id = ? and organization_id = ?', [conversationId, actor.organizationId])
      : [];
    if (!found) throw AppError.notFound('Conversation');
    return this.list(actor, conversationId, args);
  }

  /** One conversation's page by its keyset on (conversation_id, sequence, id), its cursors written. */
  private async list(actor: Actor, conversationId: string, args: CursorPageArgs): Promise<Page<ToolCallRecord>> {
    // The entity maps the same columns as the store's records (tool-call.entity.ts).
    const page = await readList(this.em, {
      entity: ToolCall,
      where: { organizationId: actor.organizationId, conversationId },
      options: fixedOrderPage<ToolCall>(args, 'sequence', 'asc'),
      page: args.page,
      limit: args.limit,
    });
    return page as unknown as Page<ToolCallRecord>;
  }

  /** A page per conversation in one statement (Conversation.toolCalls, batched); a cursor's by its keyset. */
  async pagesFor(actor: Actor, conversationIds: readonly string[], args: CursorPageArgs): Promise<Map<string, Page<ToolCallRecord>>> {
    const ids = conversationIds.filter(isUuid);
    if (args.cursor) {
      // A cursor belongs to one conversation's list: each conversation's page by its keyset.
      const read = new Map(await Promise.all(ids.map(async (id) => [id, await this.list(actor, id, args)] as const)));
      return new Map(conversationIds.map((id) => [id, read.get(id) ?? { data: [], meta: pageMeta(args.page, args.limit, 0) }]));
    }
    const pages = await pagesByParent(this.em, conversationIds, {
      entity: ToolCall,
      table: 'tool_calls',
      parentColumn: 'conversation_id',
      columns: '*',
      orderBy: 'sequence asc, id asc',
      organizationId: actor.organizationId,
      page: args.page,
      limit: args.limit,
      keyset: { field: 'sequence', order: 'asc' },
    });
    return pages as unknown as Map<string, Page<ToolCallRecord>>;
  }
}
