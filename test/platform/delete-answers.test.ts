import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** The two DELETEs whose answer the interface fixes; every other one answers 204 with no body. */
const FIXED: Record<string, string> = {
  '/api/auth/api-keys/{id}': '200', // endpoint 17: {message}
  '/api/agents/{id}': '200', // endpoint 4: the archived agent
};

describe('DELETE answers one way', () => {
  it('every DELETE route of the OpenAPI document declares 204 without a body, but the two the interface fixes', async () => {
    const { body: doc } = await app.rest().get('/api/openapi.json');
    const deletes = Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>)
      .filter(([, methods]) => methods.delete)
      .map(([path, methods]) => {
        const success = Object.keys(methods.delete!.responses).filter((status) => status.startsWith('2'));
        return { path, success, hasBody: success.some((status) => methods.delete!.responses[status]!.content !== undefined) };
      });
    expect(deletes.length).toBeGreaterThanOrEqual(10);
    for (const { path, success, hasBody } of deletes) {
      const expected = FIXED[path] ?? '204';
      expect({ path, success, hasBody }).toEqual({ path, success: [expected], hasBody: expected !== '204' });
    }
  });
});
