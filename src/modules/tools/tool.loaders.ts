import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { CursorPageArgs, Page } from '../../common/pagination.js';
import type { ToolCallRecord } from './tool-call.store.js';
import type { ToolCallService } from './tool-call.service.js';

/** Per-request batches for Conversation.toolCalls: one statement per page arguments, however many conversations. */
export class ToolLoaders {
  private readonly pages = new Map<string, DataLoader<string, Page<ToolCallRecord>>>();

  constructor(
    private readonly toolCalls: ToolCallService,
    private readonly actor: Actor,
  ) {}

  toolCallPage(conversationId: string, args: CursorPageArgs): Promise<Page<ToolCallRecord>> {
    const key = JSON.stringify([args.page, args.limit, args.cursor ?? null]);
    let loader = this.pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const pages = await this.toolCalls.pagesFor(this.actor, ids, args);
        return ids.map((id) => pages.get(id)!);
      });
      this.pages.set(key, loader);
    }
    return loader.load(conversationId);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    tools: ToolLoaders;
  }
}
