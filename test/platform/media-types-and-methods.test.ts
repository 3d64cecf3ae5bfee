import { REST_ROUTES } from '../../src/doors.js';
import { agentInput } from '../agents/fixtures.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

async function raw(method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array) {
  const res = await fetch(`${app.baseUrl}${path}`, { method, headers: { 'x-api-key': acme.apiKey, ...headers }, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('a body that is not JSON', () => {
  const json = JSON.stringify(agentInput());

  it.each([
    ['text/plain', json, /got text\/plain/],
    ['application/x-www-form-urlencoded', 'name=Agent&instructions=Help', /got application\/x-www-form-urlencoded/],
    ['multipart/form-data; boundary=x', '--x--', /got multipart\/form-data/],
  ])('sent as %s answers 415 UNSUPPORTED_MEDIA_TYPE saying what to send', async (type, body, got) => {
    const res = await raw('POST', '/api/agents', { 'content-type': type }, body);
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, title: 'Unsupported Media Type' });
    expect(res.body.detail).toMatch(/content-type: application\/json/);
    expect(res.body.detail).toMatch(got);
  });

  it('sent with no content-type at all answers 415 too, not "name must be a string"', async () => {
    const res = await raw('POST', '/api/agents', {}, new TextEncoder().encode(json));
    expect(res.status).toBe(415);
    expect(res.body.detail).toMatch(/no content-type was sent/);
    // a PUT with a body is held to the same rule
    const key = await acme.rest.post('/api/auth/api-keys', { name: 'k', prefix: 'k_' });
    expect((await raw('PUT', `/api/auth/api-keys/${key.body.id}`, { 'content-type': 'text/plain' }, '{"name":"x"}')).status).toBe(415);
  });

  it('the same body as application/json (with a charset) is accepted', async () => {
    const res = await raw('POST', '/api/agents', { 'content-type': 'application/json; charset=utf-8' }, json);
    expect(res.status).toBe(201);
  });

  it('an empty body without content-type on a route whose body is optional stays accepted', async () => {
    const agent = await acme.rest.post('/api/agents', agentInput());
    const res = await raw('POST', `/api/agents/${agent.body.id}/conversations`, {});
    expect(res.status).toBe(201);
    // and a route that reads no body ignores one
    expect((await raw('POST', '/api/auth/token', { 'content-type': 'text/plain' }, 'hello')).status).toBe(200);
  });

  it('OpenAPI lists 415 on every route that takes a body, and only there', async () => {
    const { body: doc } = await app.rest().get('/api/openapi.json');
    for (const route of REST_ROUTES) {
      const responses = doc.paths[`/api${route.path}`][route.method].responses;
      expect([route.operationId, Boolean(responses['415'])]).toEqual([route.operationId, Boolean(route.body)]);
    }
  });
});

describe('a method a known path does not take', () => {
  it('answers 405 METHOD_NOT_ALLOWED with an Allow header listing the methods of that path', async () => {
    const agent = await acme.rest.post('/api/agents', agentInput());
    const res = await raw('PATCH', `/api/agents/${agent.body.id}`, { 'content-type': 'application/json' }, '{}');
    expect(res.status).toBe(405);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405, title: 'Method Not Allowed' });
    expect(res.body.detail).toMatch(/^\/api\/agents\/[^ ]+ does not take PATCH; it takes /);
    const listed = res.headers.get('allow')!.split(', ');
    expect(listed).toContain('GET');
    expect(listed).toContain('DELETE');
    // what Allow lists is really served there
    expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).status).toBe(200);
  });

  it('for every path of the route table, Allow lists its declared methods, and it is true: listed ones are served, others are 405', async () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of REST_ROUTES) byPath.set(route.path, (byPath.get(route.path) ?? new Set<string>()).add(route.method.toUpperCase()));
    for (const [path, declared] of byPath) {
      const concrete = `/api${path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000')}`;
      const unused = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find((method) => !declared.has(method))!;
      const refused = await acme.rest.request(unused, concrete);
      expect([path, unused, refused.status, refused.body.code]).toEqual([path, unused, 405, 'METHOD_NOT_ALLOWED']);
      const allow = new Set(refused.headers.get('allow')!.split(', '));
      for (const method of declared) expect([path, method, allow.has(method)]).toEqual([path, method, true]);
      if (declared.has('GET')) expect(allow.has('HEAD')).toBe(true);
      // /contacts/import also matches /contacts/{id}: Allow is what Express really serves on the URL
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await acme.rest.request(method, concrete);
        expect([path, method, res.status === 405]).toEqual([path, method, !allow.has(method)]);
        expect(res.body?.detail ?? '').not.toMatch(/^No route/);
      }
    }
  });

  it('an unknown path is still 404 NOT_FOUND, without Allow', async () => {
    const res = await acme.rest.request('PATCH', '/api/nothing-here');
    expect([res.status, res.body.code, res.headers.get('allow')]).toEqual([404, 'NOT_FOUND', null]);
  });
});
