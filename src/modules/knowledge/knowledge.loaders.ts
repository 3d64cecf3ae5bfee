import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { KnowledgeDocument, KnowledgeDocumentStatus } from './knowledge-document.entity.js';
import type { KnowledgeService } from './knowledge.service.js';

/** Per-request batches for KnowledgeBase.documents: one statement per (status, withContent) variant, however many bases. */
export class KnowledgeLoaders {
  private readonly documents = new Map<string, DataLoader<string, KnowledgeDocument[]>>();

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly actor: Actor,
  ) {}

  documentsOf(knowledgeBaseId: string, status: KnowledgeDocumentStatus | null, withContent: boolean): Promise<KnowledgeDocument[]> {
    const key = JSON.stringify([status, withContent]);
    let loader = this.documents.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byBase = await this.knowledge.documentsFor(this.actor, ids, { status, withContent });
        return ids.map((id) => byBase.get(id) ?? []);
      });
      this.documents.set(key, loader);
    }
    return loader.load(knowledgeBaseId);
  }
}
