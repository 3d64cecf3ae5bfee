import { KnowledgeBasesWithDocumentsDocument, type KnowledgeBasesWithDocumentsQuery } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';

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
