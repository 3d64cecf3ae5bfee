import { getIntrospectionQuery } from 'graphql';
import { ERROR_STATUS, ERROR_TITLE, errorAnchor, type ErrorCode } from '../../src/common/errors.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

async function page(url: string) {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), html: await res.text() };
}

describe('/docs/errors', () => {
  it('is an HTML page, served without credentials, with a section per code of the error table: status, title, what to do', async () => {
    const docs = await page(`${app.baseUrl}/docs/errors`);
    expect(docs.status).toBe(200);
    expect(docs.type).toContain('text/html');
    const sections = [...docs.html.matchAll(/<section id="([a-z-]+)"><h2><code>(\w+)<\/code> — (\d+) ([^<]+)<\/h2><p>(.+?)<\/p><\/section>/g)];
    expect(sections.map((section) => section[2])).toEqual(Object.keys(ERROR_STATUS));
    for (const [, anchor, code, status, title, help] of sections) {
      expect([anchor, Number(status), title]).toEqual([errorAnchor(code as ErrorCode), ERROR_STATUS[code as ErrorCode], ERROR_TITLE[code as ErrorCode]]);
      expect(help!.length).toBeGreaterThan(30);
    }
  });

  it("every problem's type leads to the section of its code on the gateway's own page", async () => {
    const agent = await acme.rest.post('/api/agents', {});
    const answers = [
      agent,
      await acme.rest.get('/api/agents/00000000-0000-4000-8000-000000000000'),
      await acme.rest.request('PATCH', '/api/agents'),
      await app.rest().get('/api/users/me'),
    ];
    expect(answers.map((res) => res.body.code)).toEqual(['BAD_USER_INPUT', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'UNAUTHENTICATED']);
    for (const res of answers) {
      const link = new URL(res.body.type, `${app.baseUrl}/api/agents`);
      expect(link.origin).toBe(app.baseUrl);
      expect(link.hash).toBe(`#${errorAnchor(res.body.code)}`);
      const docs = await page(link.href);
      expect(docs.status).toBe(200);
      expect(docs.html).toContain(`<section id="${link.hash.slice(1)}"><h2><code>${res.body.code}</code> — ${res.status} `);
    }
  });
});

describe('GraphQL introspection turned off', () => {
  it('says which variable turns it on', async () => {
    const closed = await startTestApp({ graphql: { ...app.config.graphql, introspection: false } });
    try {
      const res = await fetch(`${closed.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: getIntrospectionQuery() }),
      });
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(body.errors[0]!.message).toMatch(/GRAPHQL_INTROSPECTION=true/);
      expect(body.errors[0]!.message).not.toMatch(/pass introspection: true to ApolloServer/);
    } finally {
      await closed.close();
    }
  });
});

describe('GET queries on /graphql (as the README says)', () => {
  it('need the apollo-require-preflight header (CSRF protection); with it they answer', async () => {
    const url = `${app.baseUrl}/graphql?query=${encodeURIComponent('{ me { id } }')}`;
    const blocked = await fetch(url, { headers: { 'x-api-key': acme.apiKey } });
    expect(blocked.status).toBe(400);
    expect(await blocked.text()).toMatch(/Cross-Site Request Forgery/);
    const allowed = await fetch(url, { headers: { 'x-api-key': acme.apiKey, 'apollo-require-preflight': 'true' } });
    expect(allowed.status).toBe(200);
    expect(((await allowed.json()) as { data: { me: { id: string } } }).data.me.id).toBe(acme.userId);
  });
});
