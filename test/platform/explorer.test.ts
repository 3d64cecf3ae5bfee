import type { Browser, Page } from 'playwright-core';
import { GUIDE_FILES, guideUrl } from '../../src/platform/guide-files.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { browserAvailable, launchChromium, offlineContext } from '../support/browser.js';

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

  it('/docs renders the REST reference from /api/openapi.json', async () => {
    const { page, blocked, errors } = await open('/docs');
    const openApi = (await (await fetch(`${app.baseUrl}/api/openapi.json`)).json()) as { info: { title: string } };
    await page.locator('.swagger-ui .info .title').filter({ hasText: openApi.info.title }).waitFor({ timeout: 20_000 });
    await page.locator('.opblock-summary-path', { hasText: '/api/agents/{id}/activate' }).first().waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
    await page.context().close();
  });

  it('/graphiql runs a query typed in its editor, with the key typed in its Headers tab, and shows the data', async () => {
    const { page, blocked, errors } = await open('/graphiql');
    const queryEditor = page.locator('.graphiql-query-editor .CodeMirror');
    await queryEditor.waitFor({ timeout: 20_000 });
    // The explorer lists the schema's root fields: introspection works before a key is entered.
    await page.locator('button[aria-label="Show GraphiQL Explorer"]').click();
    await page.locator('.graphiql-plugin').getByText('apiKeys', { exact: true }).first().waitFor({ timeout: 20_000 });

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
    await page.waitForFunction(
      `document.querySelector('.graphiql-response .CodeMirror')?.textContent?.includes('"data"')`,
      undefined,
      { timeout: 20_000 },
    );
    const text = await response.innerText();
    expect(text).toContain('Acme Explorer');
    expect(text).toContain(acme.userId);
    expect(text).not.toContain('errors');
    expect(errors).toEqual([]);
    expect(blocked).toEqual([]);
    await page.context().close();
  });

  it('every guide loads with no console error, styled, and each of its links reaches a page that loads (and the heading it names)', async () => {
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
  }, 120_000);
});
