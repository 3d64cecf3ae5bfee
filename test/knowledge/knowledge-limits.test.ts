import { KnowledgeService } from '../../src/modules/knowledge/knowledge.service.js';
import { AddDocumentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';

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
