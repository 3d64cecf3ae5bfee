import type { Browser, Page } from 'playwright-core';
import { GUIDE_FILES, guideUrl } from '../../src/platform/guide-files.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { BROWSER_TEST_MS, browserAvailable, launchChromium, offlineContext } from '../support/browser.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme Explorer');
});
afterAll(() => app.close());

describe('the landing page', () => {
  it('answers HTML linking the reference, GraphiQL, Sandbox, the OpenAPI document and health, without credentials', async () => {
    const res = await fetch(`${app.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    for (const href of ['/docs', '/docs/guides', '/graphiql', '/graphql', '/api/openapi.json', '/healthz']) {
      expect(html).toContain(`href="${href}"`);
    }
  });

  it('serves the pages’ assets from the installed packages, and 404 for an unknown one', async () => {
    for (const path of ['/docs/assets/swagger-ui/swagger-ui-bundle.js', '/graphiql/assets/graphiql.min.js', '/graphiql/assets/explorer.umd.js']) {
      const res = await fetch(`${app.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
    expect((await fetch(`${app.baseUrl}/graphiql/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/docs/assets/swagger-ui/nothing.js`)).status).toBe(404);
  });

  it('serves only the files the pages load: not the package’s own page (the petstore), its package.json or its other bundles', async () => {
    const notServed = [
      'index.html',
      'package.json',
      'swagger-initializer.js',
      'oauth2-redirect.html',
      'swagger-ui.js',
      'swagger-ui-bundle.js.map',
      'favicon-32x32.png',
      '',
    ].map((file) => `/docs/assets/swagger-ui/${file}`);
    for (const path of notServed) expect([path, (await fetch(`${app.baseUrl}${path}`)).status]).toEqual([path, 404]);
    expect((await fetch(`${app.baseUrl}/docs/assets/swagger-ui/swagger-ui.css`)).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('an asset named like what every object inherits (constructor, __proto__, toString) is 404, never a 500', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      for (const path of [`/graphiql/assets/${name}`, `/docs/assets/swagger-ui/${name}`]) {
        const res = await fetch(`${app.baseUrl}${path}`);
        expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([path, 404, 'NOT_FOUND']);
      }
    }
  });

  it('/, /docs and /graphiql answer under a policy of their own files only: no inline script, no eval, no other origin', async () => {
    for (const path of ['/', '/docs', '/graphiql']) {
      const policy = (await fetch(`${app.baseUrl}${path}`)).headers.get('content-security-policy') ?? '';
      const directives = new Map(policy.split(/;\s*/).map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));
      expect([path, directives.get('default-src'), directives.get('script-src'), directives.get('connect-src'), directives.get('frame-ancestors')]).toEqual([
        path,
        ["'none'"],
        ["'self'"],
        ["'self'"],
        ["'none'"],
      ]);
      expect([path, directives.get('style-src')]).toEqual([path, ["'self'", expect.stringMatching(/^'sha256-[A-Za-z0-9+/]+=*'$/)]]);
      expect(policy).not.toMatch(/unsafe|\*|https?:/);
    }
  });
});

describe('the guides', () => {
  it('serves each guide as HTML without credentials, under a policy that allows no script, and 404 for an unknown page', async () => {
    for (const file of GUIDE_FILES) {
      const res = await fetch(`${app.baseUrl}${guideUrl(file)}`);
      expect([file, res.status]).toEqual([file, 200]);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await res.text()).not.toContain('<script');
    }
    expect((await fetch(`${app.baseUrl}/docs/guides/`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}/docs/guides/nothing`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/docs/guides/assets/guides.css`)).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('are linked from the REST reference', async () => {
    expect(await (await fetch(`${app.baseUrl}/docs`)).text()).toContain('href="/docs/guides"');
  });
});

(browserAvailable ? describe : describe.skip)('in headless Chromium with the network closed', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  async function open(path: string): Promise<{ page: Page; blocked: string[]; errors: string[] }> {
    const { context, blocked } = await offlineContext(browser, app.baseUrl);
    // Whatever the page's policy refuses (a script, a style, a request) is reported here, and fails the test.
    await context.addInitScript(`window.violations = [];
      document.addEventListener('securitypolicyviolation', (event) => window.violations.push(event.violatedDirective + ' ' + event.blockedURI));`);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Console errors too: a refused stylesheet or a blocked request under the guides' policy shows only there.
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${app.baseUrl}${path}`, { waitUntil: 'load' });
    return { page, blocked, errors };
  }

  it(
    '/docs renders the REST reference from /api/openapi.json',
    async () => {
      // With 150 tags and operations or more, Swagger UI (5.35) renders only those in view (a virtual list):
      // an operation further down is reached as a reader reaches it, by its deep link or by scrolling.
      const { page, blocked, errors } = await open('/docs#/Agents/activateAgent');
      const openApi = (await (await fetch(`${app.baseUrl}/api/openapi.json`)).json()) as {
        info: { title: string };
        tags: unknown[];
        paths: Record<string, object>;
      };
      const items = openApi.tags.length + Object.values(openApi.paths).reduce((count, methods) => count + Object.keys(methods).length, 0);
      expect(items).toBeGreaterThan(20);
      await page.locator('.swagger-ui .info .title').filter({ hasText: openApi.info.title }).waitFor();
      // The deep link scrolls to the operation and opens it: its parameters and responses show, under the page's policy.
      await page
        .locator('.opblock.is-open', { has: page.locator('.opblock-summary-path', { hasText: '/api/agents/{id}/activate' }) })
        .locator('.responses-wrapper')
        .waitFor();
      // The page's last operation (the last tag's last) renders once scrolled to.
      const lastTag = (openApi.tags.at(-1) as { name: string }).name;
      const lastPath = Object.entries(openApi.paths as Record<string, Record<string, { tags: string[] }>>)
        .filter(([, methods]) => Object.values(methods).some((operation) => operation.tags.includes(lastTag)))
        .at(-1)![0];
      await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
      await page.locator('.opblock-summary-path', { hasText: lastPath }).first().waitFor();
      expect(await page.evaluate('window.violations')).toEqual([]);
      expect(errors).toEqual([]);
      expect(blocked).toEqual([]);
      await page.context().close();
    },
    BROWSER_TEST_MS,
  );

  it(
    '/graphiql runs a query typed in its editor, with the key typed in its Headers tab, and shows the data',
    async () => {
      const { page, blocked, errors } = await open('/graphiql');
      const queryEditor = page.locator('.graphiql-query-editor .CodeMirror');
      await queryEditor.waitFor();
      // The explorer lists the schema's root fields: introspection works before a key is entered.
      await page.locator('button[aria-label="Show GraphiQL Explorer"]').click();
      await page.locator('.graphiql-plugin').getByText('apiKeys', { exact: true }).first().waitFor();

      await page.locator('.graphiql-editor-tools button', { hasText: 'Headers' }).click();
      const headersEditor = page.locator('.graphiql-editor-tool .CodeMirror').last();
      await headersEditor.click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      // The editors close brackets and quotes themselves: typing the closing one steps over it.
      await page.keyboard.type(`{"x-api-key": "${acme.apiKey}"}`);

      await queryEditor.click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      await page.keyboard.type('query Who { me { id organization { name } } }');
      await page.keyboard.press('Escape');
      await page.locator('.graphiql-execute-button').click();

      const response = page.locator('.graphiql-response .CodeMirror');
      // A locator, not waitForFunction: a string predicate is evaluated in the page, which its CSP refuses
      // (no 'unsafe-eval') whenever the answer is not there at the first look.
      await page.locator('.graphiql-response .CodeMirror', { hasText: '"data"' }).waitFor();
      const text = await response.innerText();
      expect(text).toContain('Acme Explorer');
      expect(text).toContain(acme.userId);
      expect(text).not.toContain('errors');
      expect(await page.evaluate('window.violations')).toEqual([]);
      expect(errors).toEqual([]);
      expect(blocked).toEqual([]);

      // The query is in the history, kept in localStorage; the key is kept nowhere in the browser.
      await page.locator('button[aria-label="Show History"]').click();
      await page.locator('.graphiql-history-item', { hasText: 'Who' }).first().waitFor();
      const stored = await page.evaluate<Record<string, Record<string, string>>>(`({ local: { ...localStorage }, session: { ...sessionStorage } })`);
      expect(stored.local['graphiql:queries']).toContain('query Who');
      expect(JSON.stringify(stored)).not.toContain(acme.apiKey);
      expect(Object.keys(stored.session)).toEqual([]);
      // After a reload the history is still there, and the Headers tab is empty again.
      await page.reload({ waitUntil: 'load' });
      await queryEditor.waitFor();
      expect(await page.evaluate(`localStorage.getItem('graphiql:queries')`)).toContain('query Who');
      expect(await page.locator('.graphiql-editor-tool .CodeMirror').last().innerText()).not.toContain(acme.apiKey);
      await page.context().close();
    },
    BROWSER_TEST_MS,
  );

  it(
    '/graphiql drops the headers an earlier version kept in its history and tabs, on its first load',
    async () => {
      const { context, blocked } = await offlineContext(browser, app.baseUrl);
      const kept = { queries: [{ query: '{ me { id } }', variables: '', headers: `{"x-api-key": "${acme.apiKey}"}`, operationName: null }] };
      await context.addInitScript(`if (!sessionStorage.getItem('seeded')) {
      sessionStorage.setItem('seeded', '1');
      localStorage.setItem('graphiql:queries', ${JSON.stringify(JSON.stringify(kept))});
      localStorage.setItem('graphiql:headers', ${JSON.stringify(JSON.stringify({ 'x-api-key': acme.apiKey }))});
    }`);
      const page = await context.newPage();
      await page.goto(`${app.baseUrl}/graphiql`, { waitUntil: 'load' });
      await page.locator('.graphiql-query-editor .CodeMirror').waitFor();
      const local = await page.evaluate<Record<string, string>>('({ ...localStorage })');
      expect(JSON.stringify(local)).not.toContain(acme.apiKey);
      expect(JSON.parse(local['graphiql:queries']!)).toEqual({ queries: [{ query: '{ me { id } }', variables: '', operationName: null }] });
      expect(blocked).toEqual([]);
      await context.close();
    },
    BROWSER_TEST_MS,
  );

  it(
    'every guide loads with no console error, styled, and each of its links reaches a page that loads (and the heading it names)',
    async () => {
      const ids = new Map<string, string[]>();
      const links = new Map<string, string>();
      for (const file of GUIDE_FILES) {
        const path = guideUrl(file);
        const { page, blocked, errors } = await open(path);
        expect([path, errors, blocked]).toEqual([path, [], []]);
        // The stylesheet applied (not refused by the policy): the header has its background.
        expect(await page.evaluate(`getComputedStyle(document.querySelector('header')).backgroundColor`)).toBe('rgb(242, 244, 248)');
        ids.set(path, await page.evaluate<string[]>(`[...document.querySelectorAll('[id]')].map((element) => element.id)`));
        const hrefs = await page.evaluate<string[]>(`[...document.querySelectorAll('a[href]')].map((a) => a.href)`);
        for (const href of hrefs) if (href.startsWith(app.baseUrl)) links.set(href, path);
        await page.context().close();
      }
      expect(links.size).toBeGreaterThan(30);
      const loaded = new Set<string>();
      for (const [href, from] of links) {
        const url = new URL(href);
        if (!ids.has(url.pathname) && !loaded.has(url.pathname)) {
          const res = await fetch(`${app.baseUrl}${url.pathname}`);
          expect([from, href, res.status]).toEqual([from, href, 200]);
          loaded.add(url.pathname);
        }
        if (url.hash && ids.has(url.pathname)) {
          expect([from, href, ids.get(url.pathname)!.includes(decodeURIComponent(url.hash.slice(1)))]).toEqual([from, href, true]);
        }
      }
    },
    BROWSER_TEST_MS,
  );
});
