import { RequestContext } from '@mikro-orm/core';
import type { KnowledgeService } from '../../src/modules/knowledge/knowledge.service.js';
import {
  AddDocumentDocument,
  CreateKnowledgeBaseDocument,
  DeleteKnowledgeBaseDocument,
  DocumentDocument,
  KnowledgeBaseDocument,
  KnowledgeBaseDocumentTextsDocument,
  KnowledgeBasesDocument,
  KnowledgeBaseWithDocumentsDocument,
  SearchKnowledgeBaseDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
  other = await app.organization('Other');
});
afterAll(() => app.close());

const REFUNDS = `Refund policy

Customers may return any product within 30 days of delivery for a full refund. Refunds are paid to the original card within five business days.`;
const SHIPPING = `Shipping

We ship parcels to every country in Europe. Standard delivery takes three to five days; express delivery arrives the next day.`;
const HOURS = `Opening hours

Our call centre answers from 8am to 6pm, Monday to Friday. On public holidays the lines are closed.`;

const DOCUMENT_FIELDS = [
  'chunkCount', 'content', 'contentType', 'createdAt', 'error', 'id', 'knowledgeBaseId', 'sizeBytes', 'status', 'title', 'updatedAt',
];

async function createBase(org: TestOrganization, name = 'Support'): Promise<string> {
  const res = await org.rest.post('/api/knowledge-bases', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function count(table: string, knowledgeBaseId: string): Promise<number> {
  const rows = await app.sql<{ n: string | number }>(`select count(*) as n from ${table} where knowledge_base_id = ?`, [knowledgeBaseId]);
  return Number(rows[0]!.n);
}

describe('knowledge bases and documents', () => {
  it('creates a base on REST and reads and lists it on both doors', async () => {
    const res = await acme.rest.post('/api/knowledge-bases', { name: 'Handbook', description: 'Staff handbook' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      organizationId: acme.organizationId,
      name: 'Handbook',
      description: 'Staff handbook',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const { knowledgeBase } = await acme.graphql.ok(KnowledgeBaseDocument, { id: res.body.id });
    expect(knowledgeBase).toEqual(res.body);
    expect((await acme.rest.get(`/api/knowledge-bases/${res.body.id}`)).body).toEqual(res.body);

    const { createKnowledgeBase: newer } = await acme.graphql.ok(CreateKnowledgeBaseDocument, { input: { name: 'Newer' } });
    expect(newer.description).toBeNull();
    const list = await acme.rest.get('/api/knowledge-bases');
    expect(list.status).toBe(200);
    expect(list.body.data.map((base: { id: string }) => base.id).slice(0, 2)).toEqual([newer.id, res.body.id]);
    const { knowledgeBases } = await acme.graphql.ok(KnowledgeBasesDocument);
    expect(knowledgeBases.data.map((base) => base.id)).toEqual(list.body.data.map((base: { id: string }) => base.id));
  });

  it('adds documents, chunked and ready, and reads one with every field of endpoint 11', async () => {
    const kbId = await createBase(acme);
    const added = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Refunds', content: REFUNDS });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ status: 'ready', error: null, contentType: 'text/plain', knowledgeBaseId: kbId, chunkCount: 1 });
    expect(added.body.sizeBytes).toBe(Buffer.byteLength(REFUNDS));

    const café = 'Café crème — ünïcode text.';
    const { addDocument } = await acme.graphql.ok(AddDocumentDocument, {
      knowledgeBaseId: kbId,
      input: { title: 'Notes', content: café, contentType: 'text_markdown' },
    });
    // GraphQL's enum spells the media type as a name; REST answers the media type itself.
    expect(addDocument).toMatchObject({ status: 'ready', contentType: 'text_markdown', sizeBytes: Buffer.byteLength(café), chunkCount: 1 });
    expect((await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${addDocument.id}`)).body.contentType).toBe('text/markdown');
    expect(addDocument.sizeBytes).toBeGreaterThan(café.length);

    const read = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents/${added.body.id}`);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body).sort()).toEqual(DOCUMENT_FIELDS);
    expect(read.body).toEqual(added.body);
    expect(read.body.content).toBe(REFUNDS);
    const { document } = await acme.graphql.ok(DocumentDocument, { knowledgeBaseId: kbId, documentId: added.body.id });
    expect(document).toEqual({ ...read.body, contentType: 'text_plain' });

    const list = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((doc: { title: string }) => doc.title)).toEqual(['Notes', 'Refunds']);
    for (const doc of list.body.data) expect(doc).not.toHaveProperty('content');

    const nested = await acme.graphql.ok(KnowledgeBaseWithDocumentsDocument, { id: kbId });
    expect(nested.knowledgeBase.documents.data.map((doc) => doc.id)).toEqual(list.body.data.map((doc: { id: string }) => doc.id));
    const filtered = await acme.graphql.ok(KnowledgeBaseWithDocumentsDocument, { id: kbId, status: 'failed' });
    expect(filtered.knowledgeBase.documents.data).toEqual([]);
    const texts = await acme.graphql.ok(KnowledgeBaseDocumentTextsDocument, { id: kbId });
    expect(texts.knowledgeBase.documents.data.map((doc) => doc.content)).toEqual([café, REFUNDS]);

    const chunks = await app.sql<{ ordinal: number; content: string }>(
      'select ordinal, content from knowledge_chunks where document_id = ?',
      [added.body.id],
    );
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.content).toContain('full refund');
  });

  it('chunks a long document into several ordered chunks', async () => {
    const kbId = await createBase(acme);
    const long = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} explains rule ${i} of the service in plain words.`).join('\n\n');
    const { body } = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Rules', content: long });
    expect(body.status).toBe('ready');
    expect(body.chunkCount).toBeGreaterThan(2);
    const rows = await app.sql<{ ordinal: number; content: string }>(
      'select ordinal, content from knowledge_chunks where document_id = ? order by ordinal',
      [body.id],
    );
    expect(rows.map((row) => row.ordinal)).toEqual(Array.from({ length: body.chunkCount }, (_, i) => i));
    expect(rows.every((row) => row.content.length <= 800)).toBe(true);
    expect(rows[rows.length - 1]!.content).toContain('Paragraph 59');
  });
});

describe('retrieval', () => {
  let kbId: string;
  const search = (query: string, topK?: number, similarityThreshold?: number) =>
    acme.graphql.ok(SearchKnowledgeBaseDocument, { id: kbId, query, topK, similarityThreshold });

  beforeAll(async () => {
    kbId = await createBase(acme, 'Customer service');
    for (const [title, content] of [['Refunds', REFUNDS], ['Shipping', SHIPPING], ['Hours', HOURS]]) {
      expect((await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title, content })).status).toBe(201);
    }
  });

  it('picks the passage that answers a natural question', async () => {
    const { searchKnowledgeBase } = await search('How many days do I have to return a product for a refund?');
    expect(searchKnowledgeBase[0]).toMatchObject({ title: 'Refunds', content: expect.stringContaining('30 days') });
    expect((await search('When is the call centre open?')).searchKnowledgeBase[0]?.title).toBe('Hours');
    expect((await search('Do you ship express delivery to Europe?')).searchKnowledgeBase[0]?.title).toBe('Shipping');
  });

  it('orders by a score in 0..1 and respects topK', async () => {
    const all = (await search('days refund delivery holidays', 10)).searchKnowledgeBase;
    expect(all.length).toBe(3);
    const scores = all.map((passage) => passage.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const score of scores) expect(score > 0 && score < 1).toBe(true);
    expect((await search('days refund delivery holidays', 2)).searchKnowledgeBase).toEqual(all.slice(0, 2));
    expect((await search('days refund delivery holidays', 1)).searchKnowledgeBase).toEqual(all.slice(0, 1));
  });

  it('leaves out passages under the similarity threshold', async () => {
    const all = (await search('refund return days delivery holidays', 10)).searchKnowledgeBase;
    const [best, , last] = all;
    expect(best!.score).toBeGreaterThan(last!.score);
    const above = (await search('refund return days delivery holidays', 10, last!.score + 0.0001)).searchKnowledgeBase;
    expect(above.map((passage) => passage.chunkId)).toEqual(all.filter((p) => p.score > last!.score).map((p) => p.chunkId));
    expect(above).not.toContainEqual(expect.objectContaining({ chunkId: last!.chunkId }));
    expect((await search('refund return days delivery holidays', 10, 1)).searchKnowledgeBase).toEqual([]);
  });

  it('finds nothing for words no passage has, or for no words at all', async () => {
    expect((await search('zebra xylophone')).searchKnowledgeBase).toEqual([]);
    expect((await search('?! & | :*')).searchKnowledgeBase).toEqual([]);
  });

  it('retrieve is scoped by organization and base, and answers [] for a deleted base', async () => {
    const question = 'refund within 30 days';
    const options = { topK: 3, similarityThreshold: 0 };
    // as the agents module calls it: inside a request's context
    const retrieve = (...args: Parameters<KnowledgeService['retrieve']>) =>
      RequestContext.create(app.db.database.orm.em, () => app.gateway.services.knowledge.retrieve(...args));
    expect((await retrieve(acme.organizationId, kbId, question, options))[0]?.title).toBe('Refunds');
    expect(await retrieve(other.organizationId, kbId, question, options)).toEqual([]);
    const otherKb = await createBase(acme, 'Empty');
    expect(await retrieve(acme.organizationId, otherKb, question, options)).toEqual([]);
    await acme.rest.delete(`/api/knowledge-bases/${otherKb}`);
    expect(await retrieve(acme.organizationId, otherKb, question, options)).toEqual([]);
    expect(await retrieve(acme.organizationId, 'not-a-uuid', question, options)).toEqual([]);
  });
});

describe('deleting a knowledge base', () => {
  it('REST answers 204 and leaves no document and no chunk', async () => {
    const kbId = await createBase(acme);
    await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'A', content: REFUNDS });
    await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'B', content: SHIPPING });
    expect(await count('knowledge_documents', kbId)).toBe(2);
    expect(await count('knowledge_chunks', kbId)).toBe(2);
    const res = await acme.rest.delete(`/api/knowledge-bases/${kbId}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await count('knowledge_documents', kbId)).toBe(0);
    expect(await count('knowledge_chunks', kbId)).toBe(0);
    expect((await acme.rest.get(`/api/knowledge-bases/${kbId}`)).status).toBe(404);
    expect((await acme.rest.delete(`/api/knowledge-bases/${kbId}`)).status).toBe(404);
  });

  it('GraphQL answers a DeletionResult and removes the documents too', async () => {
    const kbId = await createBase(acme);
    await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'A', content: HOURS });
    const { deleteKnowledgeBase } = await acme.graphql.ok(DeleteKnowledgeBaseDocument, { id: kbId });
    expect(deleteKnowledgeBase).toEqual({ id: kbId, message: expect.stringContaining(kbId) });
    expect(await count('knowledge_documents', kbId)).toBe(0);
    expect(await count('knowledge_chunks', kbId)).toBe(0);
    expect((await acme.graphql.run(KnowledgeBaseDocument, { id: kbId })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});

describe('the documents of a knowledge base', () => {
  it('are paged, newest first, the same on both doors; a bad limit is 400 on both', async () => {
    const kbId = await createBase(acme, 'Paged');
    for (const title of ['One', 'Two', 'Three']) {
      expect((await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title, content: `${title} text.` })).status).toBe(201);
    }
    const rest = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents?page=1&limit=2`);
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((doc: { title: string }) => doc.title)).toEqual(['Three', 'Two']);
    expect(rest.body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false });
    const second = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents?page=2&limit=2`);
    expect(second.body.data.map((doc: { title: string }) => doc.title)).toEqual(['One']);

    const graphql = await acme.graphql.ok(KnowledgeBaseWithDocumentsDocument, { id: kbId, page: 2, limit: 2 });
    expect(graphql.knowledgeBase.documents.data.map((doc) => doc.id)).toEqual(second.body.data.map((doc: { id: string }) => doc.id));
    expect(graphql.knowledgeBase.documents.meta).toEqual(second.body.meta);

    const badRest = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents?limit=0`);
    expect([badRest.status, badRest.body.code, badRest.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, 'BAD_USER_INPUT', ['limit']]);
    const badGraphql = await acme.graphql.run(KnowledgeBaseWithDocumentsDocument, { id: kbId, limit: 0 });
    expect(badGraphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect((await other.rest.get(`/api/knowledge-bases/${kbId}/documents?limit=2`)).status).toBe(404);
    expect((await other.graphql.run(KnowledgeBaseWithDocumentsDocument, { id: kbId })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });
});
