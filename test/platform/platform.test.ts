import { readFileSync } from 'node:fs';
import { printGatewaySchema } from '../../src/doors.js';
import { REST_ROUTES } from '../../src/doors.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp({ bodyLimitBytes: 2048 });
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

describe('the GraphQL schema', () => {
  it('schema/schema.graphql is exactly what the code builds (run npm run schema:print)', async () => {
    const checkedIn = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn).toBe(await printGatewaySchema());
  });

  it('GET /graphql in a browser shows the Apollo Sandbox landing page pointed at this endpoint', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('sandbox');
    expect(html.toLowerCase()).toContain('<!doctype html>');
  });

  it('answers Sandbox preflight requests for the credential headers', async () => {
    const res = await fetch(`${app.baseUrl}/graphql`, {
      method: 'OPTIONS',
      headers: { origin: 'https://sandbox.embed.apollographql.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-api-key' },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('access-control-allow-headers')).toContain('x-api-key');
  });
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lists every REST route the app serves, with its schemas resolvable', async () => {
    const { status, body: doc } = await app.rest().get('/api/openapi.json');
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = REST_ROUTES.map((route) => `${route.method.toUpperCase()} /api${route.path}`);
    expect(documented.sort()).toEqual(served.sort());
    for (const pointer of JSON.stringify(doc).match(/#\/components\/schemas\/\w+/g) ?? []) {
      expect(doc.components.schemas).toHaveProperty(pointer.split('/').pop()!);
    }
    expect(doc.components.schemas.CreateApiKeyInput.properties.name).toMatchObject({ maxLength: 255 });
    expect(doc.components.schemas.ApiKey.properties).not.toHaveProperty('secret');
    expect(doc.components.schemas.CreatedApiKey.required).toContain('secret');
    const idempotencyHeader = (path: string) =>
      (doc.paths[path].post.parameters ?? []).some((parameter: { name: string; in: string }) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
    expect(idempotencyHeader('/api/agents')).toBe(true);
    expect(idempotencyHeader('/api/auth/token')).toBe(false);
  });

  it('every documented route is really served (none answers the unknown-route 404)', async () => {
    for (const route of REST_ROUTES) {
      const path = `/api${route.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}`;
      const res = await acme.rest.request(route.method.toUpperCase(), path, route.body ? {} : undefined);
      expect(res.body?.detail ?? '').not.toMatch(/^No route/);
    }
  });
});

describe('errors', () => {
  it('an unknown route answers 404 problem+json', async () => {
    const res = await acme.rest.get('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, code: 'NOT_FOUND', title: 'Not Found' });
  });

  it('a body over the configured limit answers 413 problem+json', async () => {
    const res = await acme.rest.post('/api/auth/api-keys', { name: 'x'.repeat(5000), prefix: 'big' });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an unknown query parameter is refused rather than ignored', async () => {
    const res = await acme.rest.get('/api/auth/api-keys?size=5');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'size', message: expect.any(String) }]);
  });

  it('every answer carries a request id, and the error body repeats it', async () => {
    const res = await app.rest({ 'x-request-id': 'trace-123' }).get('/api/users/me');
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    expect(res.body.requestId).toBe('trace-123');
  });
});
