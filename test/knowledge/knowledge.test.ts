import { RequestContext } from '@mikro-orm/core';
import { KnowledgeService } from '../../src/modules/knowledge/knowledge.service.js';
import {
  AddDocumentDocument,
  CreateKnowledgeBaseDocument,
  DeleteKnowledgeBaseDocument,
  DocumentDocument,
  KnowledgeBaseDocument,
  KnowledgeBaseDocumentTextsDocument,
  KnowledgeBasesDocument,
  KnowledgeBasesWithDocumentsDocument,
  type KnowledgeBasesWithDocumentsQuery,
  KnowledgeBaseWithDocumentsDocument,
  SearchKnowledgeBaseDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { countedOnly, withCursors } from '../helpers/pages.js';

// Knowledge bases: documents and retrieval, access, limits and batching, one describe each (they were one file each), each on an app and a database of its own.
// One file loads the app's modules once instead of once per former file (about 3 CPU s each).

describe('knowledge', () => {
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

  const DOCUMENT_FIELDS = ['chunkCount', 'content', 'contentType', 'createdAt', 'error', 'id', 'knowledgeBaseId', 'sizeBytes', 'status', 'title', 'updatedAt'];

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

      const chunks = await app.sql<{ ordinal: number; content: string }>('select ordinal, content from knowledge_chunks where document_id = ?', [
        added.body.id,
      ]);
      expect(chunks).toHaveLength(1);
      expect(chunks[0]!.content).toContain('full refund');
    });

    it('chunks a long document into several ordered chunks', async () => {
      const kbId = await createBase(acme);
      const long = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} explains rule ${i} of the service in plain words.`).join('\n\n');
      const { body } = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Rules', content: long });
      expect(body.status).toBe('ready');
      expect(body.chunkCount).toBeGreaterThan(2);
      const rows = await app.sql<{ ordinal: number; content: string }>('select ordinal, content from knowledge_chunks where document_id = ? order by ordinal', [
        body.id,
      ]);
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
      for (const [title, content] of [
        ['Refunds', REFUNDS],
        ['Shipping', SHIPPING],
        ['Hours', HOURS],
      ]) {
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
      expect(rest.body.meta).toEqual(withCursors({ page: 1, limit: 2, total: 3, totalPages: 2, hasNextPage: true, hasPreviousPage: false }));
      const second = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents?page=2&limit=2`);
      expect(second.body.data.map((doc: { title: string }) => doc.title)).toEqual(['One']);

      const graphql = await acme.graphql.ok(KnowledgeBaseWithDocumentsDocument, { id: kbId, page: 2, limit: 2 });
      expect(graphql.knowledgeBase.documents.data.map((doc) => doc.id)).toEqual(second.body.data.map((doc: { id: string }) => doc.id));
      expect(graphql.knowledgeBase.documents.meta).toEqual(countedOnly(second.body.meta));

      const badRest = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents?limit=0`);
      expect([badRest.status, badRest.body.code, badRest.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, 'BAD_USER_INPUT', ['limit']]);
      const badGraphql = await acme.graphql.run(KnowledgeBaseWithDocumentsDocument, { id: kbId, limit: 0 });
      expect(badGraphql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect((await other.rest.get(`/api/knowledge-bases/${kbId}/documents?limit=2`)).status).toBe(404);
      expect((await other.graphql.run(KnowledgeBaseWithDocumentsDocument, { id: kbId })).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });
  });
});

describe('knowledge-access', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let other: TestOrganization;
  let kbId: string;
  let docId: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.organization('Acme');
    other = await app.organization('Other');
    kbId = (await acme.rest.post('/api/knowledge-bases', { name: 'Private' })).body.id;
    docId = (await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Secret', content: 'The vault code is 1234.' })).body.id;
  });
  afterAll(() => app.close());

  const fieldsOf = (errors: { field: string }[] | undefined) => (errors ?? []).map((error) => error.field).sort();

  describe('another organization', () => {
    it('gets 404 on every REST route', async () => {
      for (const res of [
        await other.rest.get(`/api/knowledge-bases/${kbId}`),
        await other.rest.get(`/api/knowledge-bases/${kbId}/documents`),
        await other.rest.get(`/api/knowledge-bases/${kbId}/documents/${docId}`),
        await other.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Mine now', content: 'text' }),
        await other.rest.delete(`/api/knowledge-bases/${kbId}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
      expect((await other.rest.get('/api/knowledge-bases')).body.data).toEqual([]);
    });

    it('gets NOT_FOUND on every GraphQL operation', async () => {
      for (const result of [
        await other.graphql.run(KnowledgeBaseDocument, { id: kbId }),
        await other.graphql.run(DocumentDocument, { knowledgeBaseId: kbId, documentId: docId }),
        await other.graphql.run(SearchKnowledgeBaseDocument, { id: kbId, query: 'vault code' }),
        await other.graphql.run(AddDocumentDocument, { knowledgeBaseId: kbId, input: { title: 'Mine now', content: 'text' } }),
        await other.graphql.run(DeleteKnowledgeBaseDocument, { id: kbId }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
      expect((await other.graphql.ok(KnowledgeBasesDocument)).knowledgeBases.data).toEqual([]);
    });

    it('changed nothing: the base still has its one document', async () => {
      const list = await acme.rest.get(`/api/knowledge-bases/${kbId}/documents`);
      expect(list.body.data.map((doc: { title: string }) => doc.title)).toEqual(['Secret']);
      const { searchKnowledgeBase } = await acme.graphql.ok(SearchKnowledgeBaseDocument, { id: kbId, query: 'vault code' });
      expect(searchKnowledgeBase.map((passage) => passage.documentId)).toEqual([docId]);
    });

    it('a document id under the wrong base is not found', async () => {
      const otherKb = (await acme.rest.post('/api/knowledge-bases', { name: 'Second' })).body.id;
      expect((await acme.rest.get(`/api/knowledge-bases/${otherKb}/documents/${docId}`)).status).toBe(404);
      const result = await acme.graphql.run(DocumentDocument, { knowledgeBaseId: otherKb, documentId: docId });
      expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    });

    it('a non-UUID id is simply not found on both doors', async () => {
      for (const path of ['/api/knowledge-bases/nope', '/api/knowledge-bases/nope/documents', `/api/knowledge-bases/${kbId}/documents/nope`]) {
        const res = await acme.rest.get(path);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      }
      expect((await acme.rest.delete('/api/knowledge-bases/nope')).status).toBe(404);
      for (const result of [
        await acme.graphql.run(KnowledgeBaseDocument, { id: 'nope' }),
        await acme.graphql.run(DocumentDocument, { knowledgeBaseId: kbId, documentId: 'nope' }),
        await acme.graphql.run(DeleteKnowledgeBaseDocument, { id: 'nope' }),
        await acme.graphql.run(SearchKnowledgeBaseDocument, { id: 'nope', query: 'vault' }),
      ]) {
        expect(result.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      }
    });
  });

  describe('bad input gets the same answer on both doors', () => {
    const baseCases: [string, Record<string, unknown>, string[]][] = [
      ['empty name', { name: '' }, ['name']],
      ['name of 256 characters', { name: 'n'.repeat(256) }, ['name']],
      ['description of 2001 characters', { name: 'ok', description: 'd'.repeat(2001) }, ['description']],
      ['missing name', {}, ['name']],
      ['unknown field', { name: 'ok', color: 'red' }, ['color']],
    ];

    it.each(baseCases)('create a base with %s → 400 BAD_USER_INPUT naming the field', async (_label, input, fields) => {
      const rest = await acme.rest.post('/api/knowledge-bases', input);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(rest.body.errors)).toEqual(fields);
      const gql = await acme.graphql.run(CreateKnowledgeBaseDocument, { input: input as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(fields);
    });

    const documentCases: [string, Record<string, unknown>, string[]][] = [
      ['empty title', { title: '', content: 'text' }, ['title']],
      ['title of 256 characters', { title: 't'.repeat(256), content: 'text' }, ['title']],
      ['empty content', { title: 'ok', content: '' }, ['content']],
      ['content over 1,000,000 characters', { title: 'ok', content: 'a'.repeat(1_000_001) }, ['content']],
      ['unknown contentType', { title: 'ok', content: 'text', contentType: 'application/pdf' }, ['contentType']],
      ['null contentType', { title: 'ok', content: 'text', contentType: null }, ['contentType']],
    ];

    it.each(documentCases)('add a document with %s → 400 BAD_USER_INPUT naming the field', async (_label, input, fields) => {
      const rest = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, input);
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(rest.body.errors)).toEqual(fields);
      const gql = await acme.graphql.run(AddDocumentDocument, { knowledgeBaseId: kbId, input: input as never });
      expect(gql.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(gql.errors?.[0]?.extensions.errors)).toEqual(fields);
    });

    it('the largest allowed content is stored; none of the refused ones were', async () => {
      const content = 'word '.repeat(200_000);
      const res = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Big', content });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'ready', sizeBytes: 1_000_000 });
      expect(res.body.chunkCount).toBeGreaterThan(1000);
      const titles = (await acme.rest.get(`/api/knowledge-bases/${kbId}/documents`)).body.data.map((doc: { title: string }) => doc.title);
      expect(titles.sort()).toEqual(['Big', 'Secret']);
    });

    it('a body over the 1 MiB limit → 413', async () => {
      const res = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Huge', content: 'a'.repeat(1_100_000) });
      expect(res.status).toBe(413);
      expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('search arguments out of range → BAD_USER_INPUT naming them', async () => {
      const result = await acme.graphql.run(SearchKnowledgeBaseDocument, { id: kbId, query: '', topK: 0, similarityThreshold: 2 });
      expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
      expect(fieldsOf(result.errors?.[0]?.extensions.errors)).toEqual(['query', 'similarityThreshold', 'topK']);
    });
  });
});

describe('knowledge-limits', () => {
  // Knowledge storage has per-organization quotas, and one search ranks a bounded number of passages
  // through the stored, indexed tsvector.
  let app: TestApp;
  let acme: TestOrganization;
  let globex: TestOrganization;

  beforeAll(async () => {
    app = await startTestApp({ knowledge: { maxBytesPerOrg: 100, maxDocumentsPerOrg: 2 } });
    acme = await app.organization('Acme');
    globex = await app.organization('Globex');
  });
  afterAll(() => app.close());

  const base = async (org: TestOrganization) => (await org.rest.post('/api/knowledge-bases', { name: 'KB' })).body.id as string;

  describe('knowledge quotas', () => {
    it('refuse a document past the organization’s document count with 409 on both doors; another organization is not affected', async () => {
      const kbId = await base(acme);
      for (const title of ['a', 'b']) expect((await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title, content: 'short' })).status).toBe(201);
      const rest = await acme.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'c', content: 'short' });
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toMatch(/already has 2 knowledge documents/);
      const graphql = await acme.graphql.run(AddDocumentDocument, { knowledgeBaseId: kbId, input: { title: 'c', content: 'short' } });
      expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect(await app.sql('select id from knowledge_documents where organization_id = ?', [acme.organizationId])).toHaveLength(2);
      // a deleted base frees its documents
      expect((await acme.rest.delete(`/api/knowledge-bases/${kbId}`)).status).toBe(204);
      expect((await acme.rest.post(`/api/knowledge-bases/${await base(acme)}/documents`, { title: 'd', content: 'short' })).status).toBe(201);
    });

    it('refuse a document past the organization’s bytes with 409 on both doors', async () => {
      const kbId = await base(globex);
      expect((await globex.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'big', content: 'x'.repeat(90) })).status).toBe(201);
      const rest = await globex.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'more', content: 'y'.repeat(11) });
      expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
      expect(rest.body.detail).toMatch(/hold 90 bytes; 11 more would pass its limit of 100/);
      const graphql = await globex.graphql.run(AddDocumentDocument, { knowledgeBaseId: kbId, input: { title: 'more', content: 'y'.repeat(11) } });
      expect(graphql.errors?.[0]?.extensions.code).toBe('CONFLICT');
      expect((await globex.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'fits', content: 'y'.repeat(10) })).status).toBe(201);
    });
  });

  describe('retrieval', () => {
    it('matches the stored tsvector and ranks at most maxCandidates passages', async () => {
      const open = await startTestApp();
      try {
        const org = await open.organization('Search');
        const kbId = await base(org);
        const content = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} about refunds and returns. ${'filler words here. '.repeat(40)}`).join('\n\n');
        const added = await org.rest.post(`/api/knowledge-bases/${kbId}/documents`, { title: 'Refunds', content });
        expect(added.body.chunkCount).toBeGreaterThanOrEqual(6);
        const [stored] = await open.sql<{ same: number; total: number }>(
          `select count(*) filter (where search_vector = to_tsvector('english', content))::int as same, count(*)::int as total from knowledge_chunks where knowledge_base_id = ?`,
          [kbId],
        );
        expect(stored).toEqual({ same: added.body.chunkCount, total: added.body.chunkCount });

        let passages: unknown[] = [];
        const statements = await recordStatements(open, async () => {
          passages = await open.gateway.services.knowledge.retrieve(org.organizationId, kbId, 'refunds', { topK: 50, similarityThreshold: 0 });
        });
        expect(passages.length).toBeGreaterThanOrEqual(6);
        expect(statements.join('\n')).toContain('search_vector @@');
        expect(statements.join('\n')).not.toContain('to_tsvector');

        const bounded = new KnowledgeService(open.db.database.em.fork(), { maxBytesPerOrg: Infinity, maxDocumentsPerOrg: Infinity, maxCandidates: 2 });
        expect(await bounded.retrieve(org.organizationId, kbId, 'refunds', { topK: 50, similarityThreshold: 0 })).toHaveLength(2);
      } finally {
        await open.close();
      }
    });
  });
});

describe('knowledge-batching', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** An organization with `count` knowledge bases, each with one ready and one failed document. */
  async function organizationWith(count: number): Promise<TestOrganization> {
    const org = await app.organization(`Org with ${count} bases`);
    for (let index = 0; index < count; index += 1) {
      const base = await org.rest.post('/api/knowledge-bases', { name: `Base ${index}` });
      expect(base.status).toBe(201);
      const ready = await org.rest.post(`/api/knowledge-bases/${base.body.id}/documents`, { title: `Doc ${index}`, content: `Text of base ${index}.` });
      expect(ready.status).toBe(201);
      const failed = await org.rest.post(`/api/knowledge-bases/${base.body.id}/documents`, { title: `Empty ${index}`, content: ' ' });
      expect(failed.status).toBe(201);
    }
    return org;
  }

  async function countStatements(org: TestOrganization, count: number): Promise<number> {
    let result: KnowledgeBasesWithDocumentsQuery | undefined;
    const statements = await recordStatements(app, async () => {
      result = await org.graphql.ok(KnowledgeBasesWithDocumentsDocument, { status: 'ready' });
    });
    const bases = result!.knowledgeBases.data;
    expect(bases).toHaveLength(count);
    for (const base of bases) {
      const index = base.name.replace('Base ', '');
      expect(base.documents.data).toEqual([{ id: expect.any(String), knowledgeBaseId: base.id, title: `Doc ${index}`, status: 'ready' }]);
      expect(base.texts.data.map((document) => document.content).sort()).toEqual([' ', `Text of base ${index}.`]);
    }
    return statements.length;
  }

  describe('KnowledgeBase.documents', () => {
    it('costs the same number of SQL statements for 2 and 20 bases, per (status, content) variant', async () => {
      const two = await countStatements(await organizationWith(2), 2);
      const twenty = await countStatements(await organizationWith(20), 20);
      expect(two).toBeGreaterThan(0);
      expect(twenty).toBe(two);
    }, 120_000);
  });
});
