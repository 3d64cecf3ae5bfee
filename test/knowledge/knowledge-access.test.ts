import {
  AddDocumentDocument,
  CreateKnowledgeBaseDocument,
  DeleteKnowledgeBaseDocument,
  DocumentDocument,
  KnowledgeBaseDocument,
  KnowledgeBasesDocument,
  SearchKnowledgeBaseDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

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
