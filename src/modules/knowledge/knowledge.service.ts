import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { fixedOrderPage, sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { chunkText, DEFAULT_CHUNK_OPTIONS } from './chunk-text.js';
import { KnowledgeBase } from './knowledge-base.entity.js';
import { KnowledgeChunk } from './knowledge-chunk.entity.js';
import { KnowledgeDocument, KnowledgeDocumentStatus } from './knowledge-document.entity.js';
import { DocumentListArgs, type AddDocumentInput, type CreateKnowledgeBaseInput } from './knowledge.inputs.js';
import { nameOrDescriptionMatch, pageMeta, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { pagesByParent } from '../../db/pages-by-parent.js';
import { nestedRelation, readListWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { validArgs } from '../../common/validation.js';
import { MAX_CANDIDATES, RETRIEVAL_SQL, toOrQuery } from './retrieval.js';
import { authorize } from '../organizations/roles.js';
import { EventWriter } from '../events/event-writer.js';
import { chargeAnswerBytes } from '../../platform/answer-budget.js';

export const KNOWLEDGE_BASE_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

/** A retrieved chunk of a document; score in 0..1, higher is closer to the query. */
export interface Passage {
  chunkId: string;
  documentId: string;
  title: string;
  content: string;
  score: number;
}

/** Every property of a document but its text (what a base's page reads by its keyset). */
const DOCUMENT_SUMMARY_FIELDS = ['createdAt', 'updatedAt', 'title', 'contentType', 'sizeBytes', 'status', 'error', 'chunkCount'];
/** Every column of a document but its text. */
const DOCUMENT_SUMMARY_COLUMNS = 'id, created_at, updated_at, organization_id, knowledge_base_id, title, content_type, size_bytes, status, error, chunk_count';

/**
 * KnowledgeBase.documents: a base's page of documents, newest first, read with a knowledge bases page
 * when its selection asks for them, else batched by documentPagesFor. A selection of `content`
 * declines: the batch charges the text to the answer budget per base, which the page cannot do.
 */
export const baseDocuments = nestedRelation<DocumentListArgs>({
  parent: KnowledgeBase,
  field: 'documents',
  entity: KnowledgeDocument,
  shape: 'page',
  argNames: ['status', 'page', 'limit', 'cursor'],
  // A cursor's page is read by the keyset (documentPagesFor), not by the per-parent OFFSET of this subquery.
  readArgs: async (raw) => (raw.cursor ? null : validArgs(DocumentListArgs, raw)),
  source: (parent, organizationId, args) => ({
    from: 'from knowledge_documents x',
    where: `x.knowledge_base_id = ${parent}.id and x.organization_id = ?${args.status ? ' and x.status = ?' : ''}`,
    params: [organizationId, ...(args.status ? [args.status] : [])],
    order: 'x.created_at desc, x.id desc',
  }),
  declines: (fields) => fields.has('content'),
  cursors: true,
});

export interface DocumentListOptions {
  /**
   * Load the full text too (GraphQL asks for it only when the query selects it; a single document
   * and a new one answer it by default). The text goes into the answer: it is charged to the
   * request's answer budget (RESPONSE_MAX_BYTES) by its size in bytes, before it is read where it can be.
   */
  withContent?: boolean;
}

/** Per-organization storage quotas, and how many matching passages one search ranks at most. */
export interface KnowledgeLimits {
  maxBytesPerOrg: number;
  maxDocumentsPerOrg: number;
  maxCandidates: number;
}

/** knowledge.document.ready|failed: the document as REST lists it, without its content. */
function documentPayload(document: KnowledgeDocument): Record<string, unknown> {
  return {
    id: document.id,
    organizationId: document.organization.id,
    knowledgeBaseId: document.knowledgeBase.id,
    title: document.title,
    contentType: document.contentType,
    sizeBytes: document.sizeBytes,
    status: document.status,
    error: document.error,
    chunkCount: document.chunkCount,
    createdAt: document.createdAt.toISOString(),
  };
}

/** Knowledge bases, their documents and chunks, and full-text retrieval over the chunks. */
export class KnowledgeService {
  constructor(
    private readonly em: EntityManager,
    private readonly limits: KnowledgeLimits = { maxBytesPerOrg: Infinity, maxDocumentsPerOrg: Infinity, maxCandidates: MAX_CANDIDATES },
  ) {}

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

  /**
   * A page of the organization's knowledge bases; `search` matches name or description. `include`:
   * relations of each base (KnowledgeBase.documents) read in the same statement (see nestedRelation).
   */
  async listBases(actor: Actor, args: PageArgs, include: PageSelection = WHOLE_ROWS): Promise<Page<KnowledgeBase>> {
    return readListWith(this.em, this.listRead(actor, args), { organizationId: actor.organizationId, ...include });
  }

  /** The same page as `listBases`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listBasesJson(actor: Actor, args: PageArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `listBases` reads. */
  private listRead(actor: Actor, args: PageArgs): ListRead<KnowledgeBase> {
    const field = sortField(args.sortBy, KNOWLEDGE_BASE_SORT_FIELDS);
    return {
      entity: KnowledgeBase,
      where: {
        organization: actor.organizationId,
        ...nameOrDescriptionMatch(args.search),
      },
      options: sortedPage(args, field),
      page: args.page,
      limit: args.limit,
    };
  }

  async getBase(actor: Actor, id: string): Promise<KnowledgeBase> {
    const base = isUuid(id) ? await this.em.findOne(KnowledgeBase, { id, organization: actor.organizationId }) : null;
    if (!base) throw AppError.notFound('Knowledge base');
    return base;
  }

  /** Throws NOT_FOUND unless the knowledge base exists in the actor's organization. */
  async assertExists(actor: Actor, knowledgeBaseId: string): Promise<void> {
    const count = isUuid(knowledgeBaseId) ? await this.em.count(KnowledgeBase, { id: knowledgeBaseId, organization: actor.organizationId }) : 0;
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
  async addDocument(actor: Actor, knowledgeBaseId: string, input: AddDocumentInput, options: DocumentListOptions = {}): Promise<KnowledgeDocument> {
    authorize(actor, 'knowledge.manage');
    const base = await this.getBase(actor, knowledgeBaseId);
    const sizeBytes = Buffer.byteLength(input.content, 'utf8');
    // Before the write: an answer refused for its size leaves nothing written.
    if (options.withContent ?? true) chargeAnswerBytes(sizeBytes);
    return this.em.transactional(async (em) => {
      await this.assertQuota(em, actor.organizationId, sizeBytes);
      const organization = em.getReference(Organization, actor.organizationId);
      const knowledgeBase = em.getReference(KnowledgeBase, base.id);
      const document = em.create(KnowledgeDocument, {
        organization,
        knowledgeBase,
        title: input.title,
        contentType: input.contentType ?? 'text/plain',
        content: input.content,
        sizeBytes,
      });
      await em.flush();
      let chunks: string[];
      try {
        chunks = chunkText(input.content, DEFAULT_CHUNK_OPTIONS);
        if (chunks.length === 0) throw new Error('the content has no text to index');
      } catch (error) {
        document.status = KnowledgeDocumentStatus.failed;
        document.error = `Chunking failed: ${(error as Error).message}`;
        EventWriter.stage(em, { organizationId: actor.organizationId, type: 'knowledge.document.failed', payload: documentPayload(document) });
        await em.flush();
        return document;
      }
      chunks.forEach((content, ordinal) => em.create(KnowledgeChunk, { organization, knowledgeBase, document, ordinal, content }));
      document.status = KnowledgeDocumentStatus.ready;
      document.chunkCount = chunks.length;
      EventWriter.stage(em, { organizationId: actor.organizationId, type: 'knowledge.document.ready', payload: documentPayload(document) });
      await em.flush();
      return document;
    });
  }

  /**
   * 409 CONFLICT when one more document of `sizeBytes` would take the organization past its document
   * count or its bytes. The organization's row is locked first, so concurrent adds are counted in turn.
   */
  private async assertQuota(em: EntityManager, organizationId: string, sizeBytes: number): Promise<void> {
    const { maxBytesPerOrg, maxDocumentsPerOrg } = this.limits;
    await em.execute('select id from organizations where id = ? for update', [organizationId]);
    const [usage] = await em.execute<{ documents: number; bytes: string | number }[]>(
      'select count(*)::int as documents, coalesce(sum(size_bytes), 0)::bigint as bytes from knowledge_documents where organization_id = ?',
      [organizationId],
    );
    const documents = Number(usage?.documents ?? 0);
    const bytes = Number(usage?.bytes ?? 0);
    if (documents + 1 > maxDocumentsPerOrg) {
      throw new AppError('CONFLICT', `The organization already has ${documents} knowledge documents, its limit; delete some first`);
    }
    if (bytes + sizeBytes > maxBytesPerOrg) {
      throw new AppError(
        'CONFLICT',
        `The organization's knowledge documents hold ${bytes} bytes; ${sizeBytes} more would pass its limit of ${maxBytesPerOrg}; delete some first`,
      );
    }
  }

  /** A page of a base's documents, newest first, without their text unless asked. */
  async listDocuments(actor: Actor, knowledgeBaseId: string, args: DocumentListArgs, options: DocumentListOptions = {}): Promise<Page<KnowledgeDocument>> {
    await this.assertExists(actor, knowledgeBaseId);
    return this.documentList(actor, knowledgeBaseId, args, options);
  }

  /** One base's page by its keyset on (knowledge_base_id, created_at, id), its cursors written. */
  private async documentList(actor: Actor, knowledgeBaseId: string, args: DocumentListArgs, options: DocumentListOptions): Promise<Page<KnowledgeDocument>> {
    const page = await readList(this.em, {
      entity: KnowledgeDocument,
      where: { organization: actor.organizationId, knowledgeBase: knowledgeBaseId, ...(args.status ? { status: args.status } : {}) } as never,
      options: {
        ...fixedOrderPage<KnowledgeDocument>(args, 'createdAt', 'desc'),
        fields: options.withContent ? null : { names: DOCUMENT_SUMMARY_FIELDS, ignore: new Set() },
      },
      page: args.page,
      limit: args.limit,
    });
    if (options.withContent) for (const document of page.data) chargeAnswerBytes(document.sizeBytes);
    return page;
  }

  /** A page of documents per base in one statement, newest first (GraphQL's KnowledgeBase.documents). */
  async documentPagesFor(
    actor: Actor,
    knowledgeBaseIds: readonly string[],
    args: DocumentListArgs,
    options: DocumentListOptions = {},
  ): Promise<Map<string, Page<KnowledgeDocument>>> {
    if (args.cursor) {
      // A cursor belongs to one base's list: each base's page by its keyset.
      const ids = knowledgeBaseIds.filter(isUuid);
      const read = new Map(await Promise.all(ids.map(async (id) => [id, await this.documentList(actor, id, args, options)] as const)));
      return new Map(knowledgeBaseIds.map((id) => [id, read.get(id) ?? { data: [], meta: pageMeta(args.page, args.limit, 0) }]));
    }
    const pages = await pagesByParent(this.em, knowledgeBaseIds, {
      entity: KnowledgeDocument,
      table: 'knowledge_documents',
      parentColumn: 'knowledge_base_id',
      columns: options.withContent ? '*' : DOCUMENT_SUMMARY_COLUMNS,
      orderBy: 'created_at desc, id desc',
      organizationId: actor.organizationId,
      filters: args.status ? [{ sql: 'status = ?', params: [args.status] }] : [],
      page: args.page,
      limit: args.limit,
      keyset: { field: 'createdAt', order: 'desc' },
    });
    if (options.withContent) for (const page of pages.values()) for (const document of page.data) chargeAnswerBytes(document.sizeBytes);
    return pages;
  }

  /** One document with its text (interface endpoint 11); the text is charged to the answer budget before it is read. */
  async getDocument(actor: Actor, knowledgeBaseId: string, documentId: string, options: DocumentListOptions = {}): Promise<KnowledgeDocument> {
    const document =
      isUuid(knowledgeBaseId) && isUuid(documentId)
        ? await this.em.findOne(KnowledgeDocument, { id: documentId, knowledgeBase: knowledgeBaseId, organization: actor.organizationId })
        : null;
    if (!document) throw AppError.notFound('Document');
    if (options.withContent ?? true) {
      chargeAnswerBytes(document.sizeBytes);
      await this.em.populate(document, ['content']);
    }
    return document;
  }

  /** Retrieval for a caller: NOT_FOUND for a base that is not the caller's, unlike retrieve. */
  async search(actor: Actor, knowledgeBaseId: string, query: string, options: { topK: number; similarityThreshold: number }): Promise<Passage[]> {
    await this.assertExists(actor, knowledgeBaseId);
    return this.retrieve(actor.organizationId, knowledgeBaseId, query, options);
  }

  /** Ranked passages of a knowledge base of the organization; [] when the base no longer exists. score in 0..1 */
  async retrieve(organizationId: string, knowledgeBaseId: string, query: string, options: { topK: number; similarityThreshold: number }): Promise<Passage[]> {
    const tsquery = toOrQuery(query);
    const topK = Math.min(100, Math.floor(options.topK));
    if (!tsquery || !(topK >= 1) || !isUuid(organizationId) || !isUuid(knowledgeBaseId)) return [];
    const threshold = Number.isFinite(options.similarityThreshold) ? options.similarityThreshold : 0;
    // Through the EntityManager, not its raw connection, so the request's abort signal applies.
    const rows: Passage[] = await this.em.execute(RETRIEVAL_SQL, [tsquery, organizationId, knowledgeBaseId, this.limits.maxCandidates, threshold, topK]);
    return rows.map(({ chunkId, documentId, title, content, score }) => ({ chunkId, documentId, title, content, score: Number(score) }));
  }
}
