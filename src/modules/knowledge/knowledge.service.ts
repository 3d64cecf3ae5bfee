import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { chunkText, DEFAULT_CHUNK_OPTIONS } from './chunk-text.js';
import { KnowledgeBase } from './knowledge-base.entity.js';
import { KnowledgeChunk } from './knowledge-chunk.entity.js';
import { KnowledgeDocument, KnowledgeDocumentStatus } from './knowledge-document.entity.js';
import type { AddDocumentInput, CreateKnowledgeBaseInput } from './knowledge.inputs.js';
import { RETRIEVAL_SQL, toOrQuery } from './retrieval.js';
import { authorize } from '../organizations/roles.js';

/** A retrieved chunk of a document; score in 0..1, higher is closer to the query. */
export interface Passage {
  chunkId: string;
  documentId: string;
  title: string;
  content: string;
  score: number;
}

export interface DocumentListOptions {
  status?: KnowledgeDocumentStatus | null;
  /** Load the full text too (GraphQL asks for it only when the query selects it). */
  withContent?: boolean;
}

/** Knowledge bases, their documents and chunks, and full-text retrieval over the chunks. */
export class KnowledgeService {
  constructor(private readonly em: EntityManager) {}

  async createBase(actor: Actor, input: CreateKnowledgeBaseInput): Promise<KnowledgeBase> {
    authorize(actor, 'knowledge.manage');
    const base = this.em.create(KnowledgeBase, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      description: input.description ?? null,
    });
    await this.em.flush();
    return base;
  }

  /** The organization's knowledge bases, newest first. */
  async listBases(actor: Actor): Promise<KnowledgeBase[]> {
    return this.em.find(KnowledgeBase, { organization: actor.organizationId }, { orderBy: { createdAt: 'desc', id: 'asc' } });
  }

  async getBase(actor: Actor, id: string): Promise<KnowledgeBase> {
    const base = isUuid(id) ? await this.em.findOne(KnowledgeBase, { id, organization: actor.organizationId }) : null;
    if (!base) throw AppError.notFound('Knowledge base');
    return base;
  }

  /** Throws NOT_FOUND unless the knowledge base exists in the actor's organization. */
  async assertExists(actor: Actor, knowledgeBaseId: string): Promise<void> {
    const count = isUuid(knowledgeBaseId)
      ? await this.em.count(KnowledgeBase, { id: knowledgeBaseId, organization: actor.organizationId })
      : 0;
    if (count === 0) throw AppError.notFound('Knowledge base');
  }

  /** Removes the base, its documents and their chunks in one transaction (the foreign keys cascade too). */
  async deleteBase(actor: Actor, id: string): Promise<{ id: string; message: string }> {
    authorize(actor, 'knowledge.manage');
    await this.assertExists(actor, id);
    await this.em.transactional(async (em) => {
      const scope = { knowledgeBase: id, organization: actor.organizationId };
      await em.nativeDelete(KnowledgeChunk, scope);
      await em.nativeDelete(KnowledgeDocument, scope);
      await em.nativeDelete(KnowledgeBase, { id, organization: actor.organizationId });
    });
    return { id, message: `Knowledge base ${id} deleted` };
  }

  /**
   * Stores a document and its chunks in one transaction: `ready` with its chunk count, or
   * `failed` with the error when it cannot be chunked.
   */
  async addDocument(actor: Actor, knowledgeBaseId: string, input: AddDocumentInput): Promise<KnowledgeDocument> {
    authorize(actor, 'knowledge.manage');
    const base = await this.getBase(actor, knowledgeBaseId);
    return this.em.transactional(async (em) => {
      const organization = em.getReference(Organization, actor.organizationId);
      const knowledgeBase = em.getReference(KnowledgeBase, base.id);
      const document = em.create(KnowledgeDocument, {
        organization,
        knowledgeBase,
        title: input.title,
        contentType: input.contentType ?? 'text/plain',
        content: input.content,
        sizeBytes: Buffer.byteLength(input.content, 'utf8'),
      });
      await em.flush();
      let chunks: string[];
      try {
        chunks = chunkText(input.content, DEFAULT_CHUNK_OPTIONS);
        if (chunks.length === 0) throw new Error('the content has no text to index');
      } catch (error) {
        document.status = KnowledgeDocumentStatus.failed;
        document.error = `Chunking failed: ${(error as Error).message}`;
        await em.flush();
        return document;
      }
      chunks.forEach((content, ordinal) => em.create(KnowledgeChunk, { organization, knowledgeBase, document, ordinal, content }));
      document.status = KnowledgeDocumentStatus.ready;
      document.chunkCount = chunks.length;
      await em.flush();
      return document;
    });
  }

  /** A base's documents, newest first, without their text unless asked. */
  async listDocuments(actor: Actor, knowledgeBaseId: string, options: DocumentListOptions = {}): Promise<KnowledgeDocument[]> {
    await this.assertExists(actor, knowledgeBaseId);
    return this.documentsOf(actor, knowledgeBaseId, options);
  }

  /** Documents of a base already known to be the actor's. */
  async documentsOf(actor: Actor, knowledgeBaseId: string, options: DocumentListOptions = {}): Promise<KnowledgeDocument[]> {
    return (await this.documentsFor(actor, [knowledgeBaseId], options)).get(knowledgeBaseId)!;
  }

  /** Documents of several bases in one statement, each list newest first (GraphQL's KnowledgeBase.documents). */
  async documentsFor(actor: Actor, knowledgeBaseIds: readonly string[], options: DocumentListOptions = {}): Promise<Map<string, KnowledgeDocument[]>> {
    const byBase = new Map(knowledgeBaseIds.map((id) => [id, [] as KnowledgeDocument[]]));
    const ids = knowledgeBaseIds.filter(isUuid);
    if (ids.length === 0) return byBase;
    const documents = await this.em.find(
      KnowledgeDocument,
      {
        organization: actor.organizationId,
        knowledgeBase: { $in: ids },
        ...(options.status ? { status: options.status } : {}),
      },
      { orderBy: { createdAt: 'desc', id: 'asc' }, populate: options.withContent ? ['content'] : [] },
    );
    for (const document of documents) byBase.get(document.knowledgeBase.id)?.push(document);
    return byBase;
  }

  /** One document with its text (interface endpoint 11). */
  async getDocument(actor: Actor, knowledgeBaseId: string, documentId: string): Promise<KnowledgeDocument> {
    const document =
      isUuid(knowledgeBaseId) && isUuid(documentId)
        ? await this.em.findOne(
            KnowledgeDocument,
            { id: documentId, knowledgeBase: knowledgeBaseId, organization: actor.organizationId },
            { populate: ['content'] },
          )
        : null;
    if (!document) throw AppError.notFound('Document');
    return document;
  }

  /** Retrieval for a caller: NOT_FOUND for a base that is not the caller's, unlike retrieve. */
  async search(actor: Actor, knowledgeBaseId: string, query: string, options: { topK: number; similarityThreshold: number }): Promise<Passage[]> {
    await this.assertExists(actor, knowledgeBaseId);
    return this.retrieve(actor.organizationId, knowledgeBaseId, query, options);
  }

  /** Ranked passages of a knowledge base of the organization; [] when the base no longer exists. score in 0..1 */
  async retrieve(
    organizationId: string,
    knowledgeBaseId: string,
    query: string,
    options: { topK: number; similarityThreshold: number },
  ): Promise<Passage[]> {
    const tsquery = toOrQuery(query);
    const topK = Math.min(100, Math.floor(options.topK));
    if (!tsquery || !(topK >= 1) || !isUuid(organizationId) || !isUuid(knowledgeBaseId)) return [];
    const threshold = Number.isFinite(options.similarityThreshold) ? options.similarityThreshold : 0;
    const rows: Passage[] = await this.em
      .getConnection()
      .execute(RETRIEVAL_SQL, [tsquery, organizationId, knowledgeBaseId, threshold, topK]);
    return rows.map(({ chunkId, documentId, title, content, score }) => ({ chunkId, documentId, title, content, score: Number(score) }));
  }
}
