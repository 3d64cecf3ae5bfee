import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { Page } from '../../common/pagination.js';
import type { KnowledgeDocument } from './knowledge-document.entity.js';
import type { DocumentListArgs } from './knowledge.inputs.js';
import type { KnowledgeService } from './knowledge.service.js';

/** Per-request batches for KnowledgeBase.documents: one statement per (arguments, withContent) variant, however many bases. */
export class KnowledgeLoaders {
  private readonly documents = new Map<string, DataLoader<string, Page<KnowledgeDocument>>>();

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly actor: Actor,
  ) {}

  documentPage(knowledgeBaseId: string, args: DocumentListArgs, withContent: boolean): Promise<Page<KnowledgeDocument>> {
    const key = JSON.stringify([args.status ?? null, args.page, args.limit, args.cursor ?? null, withContent]);
    let loader = this.documents.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const pages = await this.knowledge.documentPagesFor(this.actor, ids, args, { withContent });
        return ids.map((id) => pages.get(id)!);
      });
      this.documents.set(key, loader);
    }
    return loader.load(knowledgeBaseId);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    knowledge: KnowledgeLoaders;
  }
}
