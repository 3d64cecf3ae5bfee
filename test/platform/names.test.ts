import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
let paths: Record<string, Record<string, { operationId: string }>>;
beforeAll(async () => {
  app = await startTestApp();
  paths = (await app.rest().get('/api/openapi.json')).body.paths;
});
afterAll(() => app.close());

const schema = buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));
const queries = Object.keys(schema.getQueryType()!.getFields());
const mutations = Object.keys(schema.getMutationType()!.getFields());

/** REST reads whose GraphQL form is a field of another type, not a root field. */
const NESTED_ONLY: Record<string, string> = { listMessages: 'Conversation.messages', listDocuments: 'KnowledgeBase.documents', listWebhookDeliveries: 'WebhookEndpoint.deliveries' };
/** REST answers GraphQL does not give: a file download (text/csv) has no GraphQL form. */
// The SSE stream's GraphQL counterparts are subscriptions (executionUpdated, callUpdated), not a query.
const REST_ONLY = new Set(['exportExecutionCalls', 'streamExecutionEvents']);

/** `knowledge-bases` → `knowledgeBaseId`, `programs` → `programId`, `audience` → `audienceId`. */
function parentId(segment: string): string {
  const singular = segment.replace(/s$/, '');
  return `${singular.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())}Id`;
}

describe('one set of names on both doors', () => {
  it('a path parameter is `id` for the resource the path is about and `<parent>Id` for its parent', () => {
    const wrong: string[] = [];
    for (const path of Object.keys(paths)) {
      const segments = path.split('/').slice(2);
      segments.forEach((segment, index) => {
        const name = /^\{(\w+)\}$/.exec(segment)?.[1];
        if (!name) return;
        const next = segments[index + 1];
        const parentOfAList = next !== undefined && segments.slice(index + 1).some((later) => /^\{/.test(later) || ['members', 'executions', 'triggers', 'documents', 'conversations', 'messages'].includes(later));
        // A member of a team is its user; a document keeps the documentId CONTRACT.md §9 gives document(knowledgeBaseId, documentId).
        const expected = parentOfAList ? parentId(segments[index - 1]!) : segments[index - 1] === 'members' ? 'userId' : segments[index - 1] === 'documents' ? 'documentId' : 'id';
        if (name !== expected) wrong.push(`${path}: {${name}} should be {${expected}}`);
      });
    }
    expect(wrong).toEqual([]);
  });

  it('a REST operationId is the GraphQL field of the same operation: the mutation itself, get<Field> or list<Field> for a query', () => {
    const unmatched: string[] = [];
    for (const methods of Object.values(paths)) {
      for (const { operationId } of Object.values(methods)) {
        if (NESTED_ONLY[operationId] || REST_ONLY.has(operationId)) continue;
        const read = /^(get|list)([A-Z]\w*)$/.exec(operationId);
        const field = read ? read[2]!.charAt(0).toLowerCase() + read[2]!.slice(1) : undefined;
        if (mutations.includes(operationId) || (field && queries.includes(field))) continue;
        unmatched.push(operationId);
      }
    }
    expect(unmatched).toEqual([]);
  });

  it('the renamed operations: createExecution(programId) makes an execution, startExecution(id) starts it, on both doors', () => {
    expect(mutations).toEqual(expect.arrayContaining(['createExecution', 'startExecution']));
    expect(mutations).not.toContain('runExecution');
    expect(schema.getMutationType()!.getFields().createExecution!.args.map((arg) => arg.name).sort()).toEqual(['input', 'programId']);
    expect(schema.getMutationType()!.getFields().startExecution!.args.map((arg) => arg.name)).toEqual(['id']);
    expect(paths['/api/programs/{programId}/executions']!.post!.operationId).toBe('createExecution');
    expect(paths['/api/executions/{id}/start']!.post!.operationId).toBe('startExecution');
    expect(Object.keys(paths).filter((path) => path.startsWith('/api/entities'))).toEqual([]);
    expect(paths['/api/business-entities']!.get!.operationId).toBe('listBusinessEntities');
  });
});
