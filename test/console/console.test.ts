import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLogger } from '../../src/common/logger.js';
import { SimulatedDialer } from '../../src/modules/programs/runner/simulated-dialer.js';
import { CONSOLE_POLICY } from '../../src/platform/console-page.js';
import { CreateContactImportDocument, LiveEventsDocument } from '../generated/graphql.js';
import { liveClient } from '../events/live-client.js';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { addUser, type TestUser } from '../helpers/users.js';
import { createAudience } from '../programs/fixtures.js';
import { testRunner } from '../runner/fixtures.js';
import { browserAvailable, launchChromium } from '../support/browser.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { BusinessEndpoint } from '../tools/business.js';
import { createTool } from '../tools/fixtures.js';
import { McpDouble } from '../tools/mcp-double.js';
import { waitForExecution } from '../telephony/fixtures.js';
import { startWebhookApp } from '../webhooks/fixtures.js';
import { WebhookReceiver } from '../webhooks/receiver.js';

// The operator console (console/, served at /console) in headless Chromium, against a gateway seeded
// through its own API: every page at a laptop's and a phone's width (screenshots in SHOTS, axe-core on
// each), and the console's promises — the public GraphQL API only, live updates without a reload, the
// caller's role respected and the API's refusals shown as they come.

const ROOT = new URL('../../', import.meta.url).pathname;
/** Where the run leaves a screenshot of each page at each width, for a person to look at (reports/ is not committed). */
const SHOTS = join(ROOT, 'reports', 'console-screenshots');
const WIDTHS = [
  { name: 'laptop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

function newest(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((entry) =>
      entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs,
    ),
  );
}

/** `npm test` builds the console first (pretest); a run of this file alone builds it here when console/ changed since. */
function ensureConsoleBuilt(): void {
  const marker = join(ROOT, 'dist/console/.vite-build');
  if (existsSync(marker) && statSync(marker).mtimeMs >= newest(join(ROOT, 'console'))) return;
  execFileSync(
    process.execPath,
    ['--input-type=module', '-e', "await (await import('vite')).build({ configFile: 'console/vite.config.ts', logLevel: 'warn' })"],
    { cwd: ROOT, stdio: 'inherit' },
  );
  writeFileSync(marker, `${new Date().toISOString()}\n`);
}

let app: TestApp;
let acme: TestOrganization;
let other: TestOrganization;
let member: TestUser;
let admin: TestUser;
let programId: string;
let receiver: WebhookReceiver;
let twilioFake: FakeTwilio;
let telnyxFake: FakeTelnyx;

beforeAll(async () => {
  ensureConsoleBuilt();
  receiver = await new WebhookReceiver().start();
  // Tools at a private address: the agent's HTTP tool is at 127.0.0.1, and the test message's call of it is refused before anything is sent.
  // The carriers' doubles check a connection's credentials as Twilio and Telnyx do.
  twilioFake = await startFakeTwilio();
  telnyxFake = await startFakeTelnyx();
  app = await startWebhookApp({
    tools: { allowPrivate: true, mcpRefreshMs: 600_000 },
    telephony: { twilioApiBaseUrl: twilioFake.url, telnyxApiBaseUrl: telnyxFake.url, credentialsKey: randomBytes(32) },
  });
  acme = await app.organization('Acme Console');
  other = await app.organization('Other Console');
  member = await addUser(app, acme, 'member');
  admin = await addUser(app, acme, 'admin');
  // An offline campaign: a streaming agent (builtin recognizer, model and synthesizer on the simulator), recorded, analysed.
  const agent = await acme.rest.post('/api/agents', {
    name: 'Ava',
    instructions: 'You confirm appointments.',
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: 'streaming' },
    analysisPlan: { summary: true, structuredData: { type: 'object', properties: { agreed: { type: 'boolean' } }, required: ['agreed'] } },
  });
  expect(agent.status).toBe(201);
  expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
  const audience = await createAudience(acme, 3);
  const program = await acme.rest.post('/api/programs', {
    name: 'Spring reminders',
    kind: 'campaign',
    agentId: agent.body.id,
    audienceId: audience.id,
    maxConcurrentCalls: 2,
    recording: { enabled: true },
    simulatedCaller: { utterances: ['Hello, who is calling?', 'Yes, Monday works for me.', 'Goodbye.'] },
  });
  expect(program.status).toBe(201);
  programId = program.body.id;
  expect((await acme.rest.post(`/api/programs/${programId}/activate`)).status).toBe(200);
  await acme.grantCredits(100);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await twilioFake?.close();
  await telnyxFake?.close();
}, 60_000);

(browserAvailable ? describe : describe.skip)('the console in headless Chromium', () => {
  let browser: Browser;
  const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

  beforeAll(async () => {
    browser = await launchChromium();
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(() => browser?.close());

  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
  });

  interface Opened {
    page: Page;
    context: BrowserContext;
    /** Every request and socket the page opened that is not the console's own files, /graphql or a route its answers point at. */
    unexpected: string[];
    requests: string[];
    errors: string[];
    close(): Promise<void>;
  }

  /** A fresh browser context (its own sessionStorage) whose every request is recorded; anything but the allowed endpoints fails the test. */
  async function openConsole(path = '/console'): Promise<Opened> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const requests: string[] = [];
    const unexpected: string[] = [];
    const allowed = [
      new RegExp(`^GET ${app.baseUrl}/console(/[^?]*)?(\\?.*)?$`),
      new RegExp(`^POST ${app.baseUrl}/graphql$`),
      new RegExp(`^GET ${app.baseUrl}/api/calls/${UUID}/recording$`),
      // The routes the API's answers point at: an import's uploadUrl and refusedRowsUrl, and a web call's /talk page (in its own tab).
      new RegExp(`^PUT ${app.baseUrl}/api/imports/${UUID}/file$`),
      new RegExp(`^GET ${app.baseUrl}/api/imports/${UUID}/refused$`),
      new RegExp(`^GET ${app.baseUrl}/talk(/talk\\.css|/talk\\.js)?$`),
      new RegExp(`^WS ${app.baseUrl.replace(/^http/, 'ws')}/graphql$`),
    ];
    const record = (entry: string) => {
      requests.push(entry);
      if (!allowed.some((pattern) => pattern.test(entry))) unexpected.push(entry);
    };
    await context.route('**/*', (route) => {
      const request = route.request();
      record(`${request.method()} ${request.url()}`);
      return request.url().startsWith(app.baseUrl) ? route.continue() : route.abort('internetdisconnected');
    });
    // What the page's policy refuses (a script, a style, a socket) is collected, and fails the test.
    await context.addInitScript(`window.violations = [];
      document.addEventListener('securitypolicyviolation', (event) => window.violations.push(event.violatedDirective + ' ' + event.blockedURI));`);
    const page = await context.newPage();
    page.on('websocket', (socket) => record(`WS ${socket.url()}`));
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of (401|403|404)/.test(message.text()))
        errors.push(message.text());
    });
    await page.goto(`${app.baseUrl}${path}`);
    return {
      page,
      context,
      unexpected,
      requests,
      errors,
      async close() {
        expect(await page.evaluate('window.violations')).toEqual([]);
        expect(unexpected).toEqual([]);
        expect(errors).toEqual([]);
        await context.close();
      },
    };
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.getByLabel('API key', { exact: true }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('organization').waitFor();
  }

  /** axe-core on the page as it is: no serious or critical violation. */
  async function expectAccessible(page: Page, label: string): Promise<void> {
    await page.evaluate(axeSource);
    const violations = (await page.evaluate(
      `axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`,
    )) as {
      id: string;
      impact: string;
      nodes: string[];
    }[];
    expect([label, violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')]).toEqual([label, []]);
  }

  /** The page at both widths: a screenshot of each, and axe-core on each. */
  async function look(page: Page, name: string): Promise<void> {
    for (const size of WIDTHS) {
      await page.setViewportSize({ width: size.width, height: size.height });
      await page.screenshot({ path: join(SHOTS, `${name}-${size.name}.png`), fullPage: true });
      // Nothing is wider than the screen (a wide table scrolls inside its own region).
      const wider = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((element) => !element.parentElement?.closest('.table-scroll') && element.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((element) => element.tagName.toLowerCase() + (element.className ? '.' + element.className : ''))`);
      expect([name, size.name, wider]).toEqual([name, size.name, []]);
      await expectAccessible(page, `${name} at ${size.name} width`);
    }
    await page.setViewportSize({ width: WIDTHS[0]!.width, height: WIDTHS[0]!.height });
  }

  it('is served offline under a strict policy of its own, and its client routes all answer the page', async () => {
    for (const path of ['/console', '/console/agents', '/console/calls/anything']) {
      const res = await fetch(`${app.baseUrl}${path}`);
      expect([path, res.status, res.headers.get('content-security-policy')]).toEqual([path, 200, CONSOLE_POLICY]);
      expect(await res.text()).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js"><\/script>/);
    }
    expect(CONSOLE_POLICY).not.toMatch(/unsafe|\*|https?:/);
    // React's production build, whoever built it (this file builds it under Jest, whose NODE_ENV is test).
    const script = /src="(\/console\/assets\/index-[\w-]+\.js)"/.exec(await (await fetch(`${app.baseUrl}/console`)).text())![1]!;
    const bundle = await (await fetch(`${app.baseUrl}${script}`)).text();
    expect([bundle.includes('jsxDEV'), bundle.includes('validateDOMNesting')]).toEqual([false, false]);
    const asset = await fetch(`${app.baseUrl}/console/assets/nothing.js`);
    expect([asset.status, ((await asset.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
  });

  it('signs in with a key kept for the tab only, shows the organization, and forgets the key on sign-out', async () => {
    const opened = await openConsole();
    const { page } = opened;
    await look(page, 'sign-in');
    await page.getByLabel('API key', { exact: true }).fill('tag_notakeynotakeynotakeynotakey000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'UNAUTHENTICATED' }).waitFor();
    await signIn(page, acme.apiKey);
    expect(await page.getByTestId('organization').innerText()).toBe('Acme Console');
    expect(await page.evaluate('[sessionStorage.length, localStorage.length, document.cookie]')).toEqual([1, 0, '']);
    await page.getByTestId('credit-balance').waitFor();
    await look(page, 'overview');
    // A reload keeps the session of the tab.
    await page.reload();
    await page.getByTestId('organization').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key', { exact: true }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    // A key deleted while the console uses it: the next answer (401) signs the console out, saying why.
    const key = await acme.rest.post('/api/auth/api-keys', { name: 'Short-lived', prefix: 'tmp_' });
    await signIn(page, key.body.secret);
    expect((await acme.rest.delete(`/api/auth/api-keys/${key.body.id}`)).status).toBe(200);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Signed out: / })
      .waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await opened.close();
  });

  it('is used with the keyboard alone: sign in, reach a page from the navigation, create an agent', async () => {
    const opened = await openConsole();
    const { page } = opened;
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type(acme.apiKey);
    await page.keyboard.press('Enter');
    await page.getByTestId('organization').waitFor();
    // The page's heading has the focus; back before it come the navigation, then the skip link, first of all.
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('H1');
    const focused = () => page.evaluate('document.activeElement?.textContent');
    for (let i = 0; i < 20 && (await focused()) !== 'Skip to content'; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Skip to content');
    for (let i = 0; i < 10 && (await focused()) !== 'Agents'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    expect(await page.evaluate('document.activeElement?.tagName')).toBe('H1');
    for (let i = 0; i < 10 && (await focused()) !== 'New agent'; i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New agent' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard agent');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Answer with one word.');
    await page.getByRole('button', { name: 'Create agent' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard agent' }).waitFor();
    await opened.close();
  });

  it('creates an agent, shows the API’s field error beside its field, and sends a test message with the reply and its usage', async () => {
    const opened = await openConsole('/console/agents/new');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByRole('heading', { name: 'New agent' }).waitFor();
    await look(page, 'agent-new');
    await page.getByLabel('Name', { exact: true }).fill('Front desk');
    await page.getByLabel('Instructions', { exact: true }).fill('Answer briefly.');
    await page.getByLabel('Hidden policy', { exact: true }).fill('Never promise refunds to anyone.');
    await page.getByLabel('Model', { exact: true }).fill('nope');
    await page.getByRole('button', { name: 'Create agent' }).click();
    // The message is the API's own, next to the field it names; the same input on REST gives the same words.
    const rest = await acme.rest.post('/api/agents', { name: 'Front desk', instructions: 'Answer briefly.', modelConfig: { model: 'nope' } });
    expect(rest.body.errors).toEqual([{ field: 'modelConfig.model', message: expect.any(String) }]);
    const fieldError = page.locator('.field-error[data-field="modelConfig.model"]');
    await fieldError.waitFor();
    expect(await fieldError.innerText()).toBe(rest.body.errors[0].message);
    expect(await page.getByLabel('Model', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await look(page, 'agent-field-error');

    await page.getByLabel('Model', { exact: true }).fill('builtin/echo');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Front desk', level: 1 }).waitFor();
    expect(page.url()).toMatch(new RegExp(`/console/agents/${UUID}$`));
    // The policy is never shown back, not even to those who may replace it.
    await page.getByLabel('Replace the hidden policy', { exact: true }).waitFor();
    expect(await page.getByLabel('Replace the hidden policy', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain('Never promise refunds');

    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('reply').waitFor();
    expect(await page.getByTestId('reply').innerText()).toContain('Hello there');
    expect(await page.getByTestId('usage').innerText()).toMatch(/^builtin\/echo: \d+ in, \d+ out, \d+ tokens$/);
    await look(page, 'agent');

    await page.getByRole('button', { name: 'Activate' }).click();
    await page.locator('.meta .badge-active').waitFor();
    await page.goto(`${app.baseUrl}/console/agents`);
    await page.getByRole('link', { name: 'Front desk' }).waitFor();
    await page.getByLabel('Search', { exact: true }).fill('front');
    // The list narrows to the one agent whose name matches (the others leave it).
    await page.getByRole('link', { name: 'Ava', exact: true }).waitFor({ state: 'detached' });
    expect(await page.getByRole('row').allInnerTexts()).toEqual([expect.stringContaining('Name'), expect.stringContaining('Front desk')]);
    await look(page, 'agents');
    await opened.close();
  });

  it('shows a member the agent without any control to change it, and the API’s refusal as it comes when the role changed meanwhile', async () => {
    const id = (await acme.rest.get('/api/agents?search=Ava')).body.data[0].id as string;
    const asMember = await openConsole(`/console/agents/${id}`);
    await signIn(asMember.page, member.apiKey);
    await asMember.page.getByTestId('agent-summary').waitFor();
    for (const control of ['Save', 'Activate', 'Archive', 'Create agent'])
      expect([control, await asMember.page.getByRole('button', { name: control }).count()]).toEqual([control, 0]);
    expect(await asMember.page.getByRole('textbox', { name: 'Instructions' }).count()).toBe(0);
    // A member talks to agents: the test chat is there.
    await asMember.page.getByRole('button', { name: 'Send' }).waitFor();
    await look(asMember.page, 'agent-as-member');
    await asMember.page.goto(`${app.baseUrl}/console/agents`);
    await asMember.page.getByRole('link', { name: 'Ava' }).waitFor();
    expect(await asMember.page.getByRole('link', { name: 'New agent' }).count()).toBe(0);
    await asMember.close();

    const asAdmin = await openConsole(`/console/agents/${id}`);
    await signIn(asAdmin.page, admin.apiKey);
    await asAdmin.page.getByRole('textbox', { name: 'Instructions' }).fill('You confirm appointments, politely.');
    expect((await acme.rest.put(`/api/users/${admin.userId}`, { role: 'member' })).status).toBe(200);
    await asAdmin.page.getByRole('button', { name: 'Save' }).click();
    const refusal = asAdmin.page.locator('.form-error[data-code="FORBIDDEN"]');
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain('Only an owner or an admin may create, change, activate or delete agents');
    expect((await acme.rest.get(`/api/agents/${id}`)).body.instructions).toBe('You confirm appointments.');
    expect((await acme.rest.put(`/api/users/${admin.userId}`, { role: 'admin' })).status).toBe(200);
    await asAdmin.close();
  });

  let callId: string;

  it('runs a campaign on the simulator: the execution page moves to completed by subscription, without a reload', async () => {
    // The test hears of each analysis by the event stream, as any integrator would.
    const live = liveClient(app.baseUrl, { 'x-api-key': acme.apiKey });
    try {
      const analyzed = live.subscribe(LiveEventsDocument, { types: ['call.analyzed'] });
      await live.connected;
      const opened = await openConsole(`/console/campaigns/${programId}`);
      const { page } = opened;
      await signIn(page, acme.apiKey);
      await page.getByRole('heading', { name: 'Spring reminders' }).waitFor();
      await look(page, 'program');
      const runner = testRunner(app, {
        dialer: new SimulatedDialer({ seed: 'console', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } }),
        logger: createLogger('silent'),
        intervalMs: 10,
        conversations: app.gateway.services.conversations,
      });
      try {
        await page.evaluate('window.stayed = true');
        await page.getByRole('button', { name: 'Start a new execution' }).click();
        await page.getByTestId('execution-status').waitFor();
        runner.start();
        await page.getByTestId('execution-status').filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
      } finally {
        await runner.stop();
      }
      // The same document all along: the page moved by the subscription, it was not loaded again.
      expect(await page.evaluate('window.stayed')).toBe(true);
      expect(opened.requests.filter((request) => request.startsWith('GET ') && !request.includes('/assets/'))).toHaveLength(1);
      const executionId = /\/executions\/([0-9a-f-]+)$/.exec(page.url())![1]!;
      const done = (await acme.rest.get(`/api/executions/${executionId}`)).body;
      expect([done.status, done.totalContacts, done.contactsCompleted]).toEqual(['completed', 3, 3]);
      for (const [counter, value] of [
        ['total', 3],
        ['pending', 0],
        ['in-progress', 0],
        ['completed', 3],
        ['failed', 0],
        ['credits', done.creditsSpent],
      ]) {
        await page
          .getByTestId(`counter-${counter}`)
          .filter({ hasText: new RegExp(`^${value}$`) })
          .waitFor();
      }
      await page.getByTestId('outcome-answered').filter({ hasText: /^3$/ }).waitFor();
      expect(await page.locator('[data-testid="calls-chart"] rect').count()).toBeGreaterThan(0);
      const balance = (await acme.rest.get('/api/organization')).body.creditBalance as number;
      await page
        .getByTestId('credit-balance')
        .filter({ hasText: new RegExp(`^${balance}$`) })
        .waitFor();
      await look(page, 'execution');
      callId = ((await acme.rest.get(`/api/calls?executionId=${executionId}&limit=1`)).body.data[0] as { id: string }).id;
      await analyzed.until((events) => events.length >= 3, 30_000);
      await opened.close();
    } finally {
      await live.close();
    }
  });

  it('creates a weekday program in the console and says why its execution dials no one, and until when, as the runner finds it', async () => {
    const audience = await createAudience(acme, 2);
    const audienceName = (await acme.rest.get(`/api/audience/${audience.id}`)).body.name as string;
    const opened = await openConsole('/console/campaigns/new');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByLabel('Name', { exact: true }).fill('Weekday reminders');
    await page.getByLabel('Audience', { exact: true }).selectOption({ label: `${audienceName} (2)` });
    await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Ava (active)' });
    await page.getByLabel('Call only within a calling window', { exact: true }).check();
    // Monday to Friday are ticked to begin with; a start that is no time is the API's field error, beside it.
    expect(await page.getByRole('group', { name: 'Days' }).getByRole('checkbox', { checked: true }).count()).toBe(5);
    await page.getByLabel('From', { exact: true }).fill('9am');
    await page.getByRole('button', { name: 'Create program' }).click();
    const rest = await acme.rest.post('/api/programs', {
      name: 'x',
      kind: 'campaign',
      audienceId: audience.id,
      callingWindow: { startTime: '9am', endTime: '17:00', daysOfWeek: [1] },
    });
    expect(rest.body.errors).toEqual([{ field: 'callingWindow.startTime', message: expect.any(String) }]);
    await page.locator('.field-error[data-field="callingWindow.startTime"]').filter({ hasText: rest.body.errors[0].message }).waitFor();
    await look(page, 'program-new-window');
    await page.getByLabel('From', { exact: true }).fill('09:00');
    await page.getByRole('button', { name: 'Create program' }).click();
    await page.getByRole('heading', { name: 'Weekday reminders', level: 1 }).waitFor();
    await page.getByText('09:00–17:00, Mon, Tue, Wed, Thu, Fri, on each contact’s clock').waitFor();
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByRole('button', { name: 'Start a new execution' }).click();
    await page.getByTestId('execution-status').filter({ hasText: 'running' }).waitFor();
    const id = /\/executions\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    expect((await acme.rest.get(`/api/executions/${id}`)).body).toMatchObject({ status: 'running', waitingReason: null });
    expect(await page.getByTestId('waiting-reason').count()).toBe(0);
    // A Saturday on the runner's clock: the weekend on every contact's clock; the page hears of it by its subscription.
    const runner = testRunner(app, { clock: () => new Date('2026-03-14T12:00:00Z'), logger: createLogger('silent') });
    try {
      for (let tick = 0; tick < 4; tick++) await runner.tick();
      await runner.idle();
    } finally {
      await runner.stop();
    }
    const execution = (await acme.rest.get(`/api/executions/${id}`)).body;
    expect([execution.waitingReason, execution.nextCallAt]).toEqual(['outside_calling_window', expect.stringMatching(/^2026-03-16T/)]);
    const notice = page.locator(`[data-testid="waiting-reason"][data-reason="outside_calling_window"]`);
    await notice.waitFor();
    expect(await notice.innerText()).toContain('Outside every waiting contact’s calling window');
    expect(await notice.locator('time').getAttribute('datetime')).toBe(execution.nextCallAt);
    // It came by the subscription: the page was not loaded again since the console opened.
    expect(opened.requests.filter((request) => request.startsWith('GET ') && !request.includes('/assets/'))).toHaveLength(1);
    await look(page, 'execution-waiting');
    // The overview lists it among the executions not over yet, with its reason and next call; the program's list names the reason too.
    await page.goto(`${app.baseUrl}/console`);
    const unfinished = page.getByRole('region', { name: 'Executions not over yet' }).getByRole('row').filter({ hasText: 'Weekday reminders' });
    await unfinished.getByRole('cell', { name: 'Outside the calling window' }).waitFor();
    expect(await unfinished.locator('time').getAttribute('datetime')).toBe(execution.nextCallAt);
    await look(page, 'overview-waiting');
    await unfinished.getByRole('link', { name: 'Weekday reminders' }).click();
    const listed = page.getByRole('region', { name: 'Executions' }).getByRole('row').nth(1);
    await listed.getByRole('cell', { name: 'Outside the calling window' }).waitFor();
    await listed.getByRole('link').click();
    // Paused by a user: the reason says so; stopped, it is final and nothing waits any more.
    await page.getByRole('group', { name: 'Control the execution' }).getByRole('button', { name: 'Pause' }).click();
    await page.locator('[data-testid="waiting-reason"][data-reason="paused"]').filter({ hasText: 'Paused by a user: resume continues it.' }).waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByTestId('execution-status').filter({ hasText: 'running' }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByTestId('execution-status').filter({ hasText: 'stopped' }).waitFor();
    await page.getByTestId('waiting-reason').waitFor({ state: 'detached' });
    expect((await acme.rest.get(`/api/executions/${id}`)).body).toMatchObject({ status: 'stopped', waitingReason: null, nextCallAt: null });
    await opened.close();
  });

  it('opens a call: its transcript with a latency bar per turn, the analysis, the recording playing, and its events', async () => {
    const opened = await openConsole(`/console/calls/${callId}`);
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByTestId('transcript').waitFor();
    const call = (await acme.rest.get(`/api/calls/${callId}`)).body;
    expect(call.turnLatency.turns.length).toBeGreaterThan(0);
    expect(await page.getByTestId('transcript').innerText()).toContain('Yes, Monday works for me.');
    expect(await page.getByTestId('latency-bar').count()).toBe(call.turnLatency.turns.length);
    expect(await page.getByTestId('latency-bar').first().locator('rect').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('analysis').innerText()).toContain(call.analysis.summary);
    expect(await page.getByTestId('analysis').innerText()).toContain('agreed');
    // The recording comes through the documented download, played from the blob the page made of it.
    const audio = page.getByTestId('recording');
    await audio.waitFor();
    // Its metadata read from the blob: a duration means the browser decoded the audio.
    type Audio = { readyState: number; duration: number; addEventListener(type: string, listener: () => void): void };
    const duration = await audio.evaluate(
      (element: Audio) =>
        new Promise<number>((resolve, reject) => {
          if (element.readyState >= 1) resolve(element.duration);
          element.addEventListener('loadedmetadata', () => resolve(element.duration));
          element.addEventListener('error', () => reject(new Error('the recording does not load')));
        }),
    );
    expect(duration).toBeGreaterThan(0);
    expect(await audio.getAttribute('src')).toMatch(/^blob:/);
    expect(opened.requests).toContain(`GET ${app.baseUrl}/api/calls/${callId}/recording`);
    const events = await page.getByTestId('call-events').innerText();
    for (const type of ['call.started', 'call.ended', 'call.analyzed']) expect(events).toContain(type);
    await look(page, 'call');

    await page.goto(`${app.baseUrl}/console/calls?outcome=answered`);
    await page.getByRole('region', { name: 'Calls' }).waitFor();
    expect(await page.getByRole('row').count()).toBe(4);
    await page.getByLabel('Outcome', { exact: true }).selectOption('busy');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No call matches.').waitFor();
    expect(page.url()).toContain('outcome=busy');
    await page.getByLabel('Outcome', { exact: true }).selectOption('');
    await page.getByLabel('Phone', { exact: true }).fill(call.to.slice(-4));
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('row').nth(1).waitFor();
    expect(await page.getByRole('row').count()).toBe(2);
    await look(page, 'calls');
    await opened.close();
  });

  it('shows a call’s transfer on its page: to whom, when, and how the dial ended, as the API answers it', async () => {
    const agentId = (await acme.rest.get('/api/agents?search=Ava')).body.data[0].id as string;
    const placed = await acme.rest.post('/api/calls', { agentId, to: '+14155550151' });
    expect(placed.status).toBe(201);
    const id = placed.body.id as string;
    // A transfer is made only on a live carrier call (a media stream and the carrier's dial report: test/voice/transfer.test.ts
    // covers those doors); this test is the page's, so the record is written as call-transfers.ts writes it.
    const transfer = { destinationName: 'Billing desk', destination: '+14155550100', mode: 'cold', transferredAt: '2026-03-02T10:00:05.000Z' };
    await app.sql('update calls set transfer = ?::jsonb where id = ?', [
      JSON.stringify({ ...transfer, dialStatus: null, dialDurationSeconds: null, dialEndedAt: null, returnedAt: null }),
      id,
    ]);
    const opened = await openConsole(`/console/calls/${id}`);
    const { page } = opened;
    await signIn(page, member.apiKey);
    const fact = page.getByTestId('call-transfer');
    await fact.waitFor();
    expect(await fact.innerText()).toMatch(/^To Billing desk \(\+14155550100\), cold, at .+; the carrier has not reported how the dial ended yet\.$/);
    expect(await fact.locator('time').first().getAttribute('datetime')).toBe(transfer.transferredAt);

    // The carrier's report, once recorded: the page read again says how it ended and after how long.
    await app.sql(`update calls set transfer = transfer || ?::jsonb where id = ?`, [
      JSON.stringify({ dialStatus: 'completed', dialDurationSeconds: 42, dialEndedAt: '2026-03-02T10:00:50.000Z' }),
      id,
    ]);
    expect((await acme.rest.get(`/api/calls/${id}`)).body.transfer).toEqual({
      ...transfer,
      dialStatus: 'completed',
      dialDurationSeconds: 42,
      dialEndedAt: '2026-03-02T10:00:50.000Z',
      returnedAt: null,
      briefing: null,
      summary: null,
      summaryError: null,
    });
    await page.reload();
    await fact.getByText('completed').waitFor();
    expect(await fact.innerText()).toMatch(/; the dial ended completed after 42 s on the line at .+\.$/);
    await look(page, 'call-transfer');

    // A dial that reached no one gives the caller back to the agent (test/voice/transfer.test.ts): the page says when.
    await app.sql(`update calls set transfer = transfer || ?::jsonb where id = ?`, [
      JSON.stringify({ dialStatus: 'busy', dialDurationSeconds: null, returnedAt: '2026-03-02T10:00:20.000Z' }),
      id,
    ]);
    await page.reload();
    await fact.getByText('busy').waitFor();
    expect(await fact.innerText()).toMatch(/; the dial ended busy at .+\. No one took the call: the caller was back with the agent at .+\.$/);
    expect(await fact.locator('time').last().getAttribute('datetime')).toBe('2026-03-02T10:00:20.000Z');
    await opened.close();
  });

  it('shows each tool call of a call in its transcript at its place among the turns: the tool, its arguments, its result or its error', async () => {
    const business = await new BusinessEndpoint().start();
    try {
      business.behave = () => ({ json: { eta: 'Monday' } });
      const tool = await createTool(acme, `${business.url}/orders`, { name: 'find_order' });
      const agent = await acme.rest.post('/api/agents', {
        name: 'Order line',
        instructions: 'You look orders up.',
        modelConfig: { model: 'builtin/echo' },
        toolIds: [tool.id],
      });
      expect(agent.status).toBe(201);
      expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
      const audience = await createAudience(acme, 1);
      // The caller asks for an order (answered), then for one whose id the tool's schema refuses (nothing sent), then hangs up.
      const program = await acme.rest.post('/api/programs', {
        name: 'Order calls',
        kind: 'campaign',
        agentId: agent.body.id,
        audienceId: audience.id,
        maxConcurrentCalls: 1,
        simulatedCaller: { utterances: ['call find_order {"orderId": "A1"}', 'call find_order {"orderId": 42}', 'Thank you, goodbye.'] },
      });
      expect(program.status).toBe(201);
      expect((await acme.rest.post(`/api/programs/${program.body.id}/activate`)).status).toBe(200);
      await acme.grantCredits(10);
      const execution = (await acme.rest.post(`/api/programs/${program.body.id}/executions`)).body;
      expect((await acme.rest.post(`/api/executions/${execution.id}/start`)).status).toBe(200);
      const runner = testRunner(app, {
        dialer: new SimulatedDialer({ seed: 'console-tools', speedMs: 0, weights: { answered: 1, no_answer: 0, busy: 0, voicemail: 0, failed: 0 } }),
        logger: createLogger('silent'),
        intervalMs: 10,
        conversations: app.gateway.services.conversations,
      });
      runner.start();
      try {
        await waitForExecution(acme, execution.id, (row) => row.status === 'completed');
      } finally {
        await runner.stop();
      }
      const call = (await acme.rest.get(`/api/calls?executionId=${execution.id}&limit=1`)).body.data[0] as { id: string; conversationId: string };
      const messages = (await acme.rest.get(`/api/conversations/${call.conversationId}/messages?limit=100`)).body.data as {
        sequence: number;
        content: string;
      }[];
      const toolCalls = (await acme.rest.get(`/api/conversations/${call.conversationId}/tool-calls`)).body.data as {
        afterSequence: number;
        status: string;
        arguments: unknown;
        answer: string | null;
        error: string | null;
      }[];
      expect(toolCalls.map((each) => [each.status, each.arguments])).toEqual([
        ['succeeded', { orderId: 'A1' }],
        ['rejected', { orderId: 42 }],
      ]);
      // The order the API gives: each tool call right after the message of its afterSequence.
      const expected = messages.flatMap((message) => [
        message.content,
        ...toolCalls.filter((each) => each.afterSequence === message.sequence).map((each) => `tool ${each.status}`),
      ]);
      expect(expected.indexOf('tool succeeded')).toBe(expected.indexOf('call find_order {"orderId": "A1"}') + 1);
      expect(expected.indexOf('tool rejected')).toBe(expected.indexOf('call find_order {"orderId": 42}') + 1);

      const opened = await openConsole(`/console/calls/${call.id}`);
      const { page } = opened;
      await signIn(page, acme.apiKey);
      const transcript = page.getByTestId('transcript');
      await transcript.waitFor();
      const entries = transcript.locator(':scope > li');
      const shown = await entries.evaluateAll((items) =>
        items.map((item) =>
          item.getAttribute('data-testid') === 'tool-call' ? `tool ${item.getAttribute('data-status')}` : (item.querySelector('.words')?.textContent ?? ''),
        ),
      );
      expect(shown).toEqual(expected);
      const [succeeded, rejected] = [page.getByTestId('tool-call').nth(0), page.getByTestId('tool-call').nth(1)];
      const answered = await succeeded.innerText();
      for (const part of ['find_order', 'succeeded', '{"orderId":"A1"}', toolCalls[0]!.answer!]) expect(answered).toContain(part);
      const refused = await rejected.innerText();
      for (const part of ['find_order', 'rejected', '{"orderId":42}', toolCalls[1]!.error!]) expect(refused).toContain(part);
      expect(toolCalls[0]!.answer).toContain('Monday');
      // Only the first was sent to the business.
      expect(business.received).toHaveLength(1);
      await look(page, 'call-tool-calls');
      await opened.close();
    } finally {
      await business.close();
    }
  });

  it('answers "not found" for another organization’s call, agent, program, execution, audience and webhook endpoint in the address', async () => {
    const opened = await openConsole(`/console/calls/${callId}`);
    const { page } = opened;
    await signIn(page, other.apiKey);
    await page.getByRole('heading', { name: 'Call not found' }).waitFor();
    await look(page, 'call-not-found');
    const agentId = (await acme.rest.get('/api/agents?search=Ava')).body.data[0].id as string;
    const executionId = ((await acme.rest.get(`/api/programs/${programId}/executions`)).body as { id: string }[])[0]!.id;
    const audienceId = (await acme.rest.get(`/api/programs/${programId}`)).body.audienceId as string;
    const endpoint = await acme.rest.post('/api/webhook-endpoints', { url: `${receiver.url}/elsewhere` });
    expect(endpoint.status).toBe(201);
    for (const [path, what] of [
      [`agents/${agentId}`, 'Agent'],
      [`campaigns/${programId}`, 'Program'],
      [`executions/${executionId}`, 'Execution'],
      [`audiences/${audienceId}`, 'Audience'],
      [`settings/webhooks/${endpoint.body.id}`, 'Webhook endpoint'],
    ]) {
      await page.goto(`${app.baseUrl}/console/${path}`);
      await page.getByRole('heading', { name: `${what} not found` }).waitFor();
      // Nothing of the other organization's record is on the page.
      expect([path, await page.getByText('Ava').count(), await page.getByText('Spring reminders').count()]).toEqual([path, 0, 0]);
    }
    await opened.close();
  });

  it('shows contacts, audiences, the do-not-call list and campaigns, and their forms work', async () => {
    const opened = await openConsole('/console/contacts');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await page.getByLabel('Phone', { exact: true }).fill('12');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.locator('.field-error[data-field="phone"]').waitFor();
    await page.getByLabel('Phone', { exact: true }).fill('+14155550199');
    await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.getByRole('cell', { name: 'Grace Hopper', exact: true }).waitFor();
    await look(page, 'contacts');

    await page.goto(`${app.baseUrl}/console/audiences`);
    await page.getByLabel('Name', { exact: true }).fill('Pioneers');
    await page.getByRole('button', { name: 'Create audience' }).click();
    await page.getByRole('heading', { name: 'Pioneers', level: 1 }).waitFor();
    await page.getByLabel('Find contacts by name or phone', { exact: true }).fill('Grace');
    await page.getByRole('button', { name: 'Add Grace Hopper' }).click();
    await page.getByRole('cell', { name: 'Grace Hopper', exact: true }).waitFor();
    await look(page, 'audience');
    await page.goto(`${app.baseUrl}/console/audiences`);
    await page.getByRole('link', { name: 'Pioneers' }).waitFor();
    await look(page, 'audiences');

    await page.goto(`${app.baseUrl}/console/do-not-call`);
    await page.getByLabel('Number', { exact: true }).fill('+14155550198');
    await page.getByLabel('Note', { exact: true }).fill('Asked on the phone');
    await page.getByRole('button', { name: 'Add number' }).click();
    await page.getByRole('cell', { name: 'Asked on the phone', exact: true }).waitFor();
    // A CSV with one bad row and one number already listed: a preview of its lines, then the refused row named by line and reason.
    const csv = 'phone,note\n+14155550197,From the front desk\n12,typo\n+14155550198,again\n';
    await page.getByLabel('CSV file', { exact: true }).setInputFiles({ name: 'numbers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByTestId('import-preview').getByRole('cell', { name: '12,typo', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Import numbers' }).click();
    const imported = page.getByTestId('import-result');
    await imported.getByText('1 number added; 1 row refused; 1 already on the list.').waitFor();
    // The same file on REST (another organization, whose list is empty) refuses the same line with the same words.
    const rest = await other.rest.post('/api/do-not-call/import', { csv });
    expect(rest.body.rejected).toEqual([{ line: 3, reason: expect.any(String) }]);
    const refused = imported.getByRole('region', { name: 'Rows refused' }).getByRole('row').nth(1);
    expect(await refused.getByRole('cell').allInnerTexts()).toEqual(['3', rest.body.rejected[0].reason]);
    await page.getByRole('cell', { name: 'From the front desk', exact: true }).waitFor();
    await look(page, 'do-not-call');

    await page.goto(`${app.baseUrl}/console/campaigns`);
    await page.getByRole('link', { name: 'Spring reminders' }).waitFor();
    await look(page, 'campaigns');
    await page.goto(`${app.baseUrl}/console/campaigns/new`);
    await page.getByRole('button', { name: 'Create program' }).waitFor();
    await look(page, 'program-new');
    await opened.close();
  });

  it('imports a CSV of contacts as a job: its first lines, the job followed live to its counts, the refused row named; a member sees no import', async () => {
    const audience = await acme.rest.post('/api/audience', { name: 'Imported in the console' });
    expect(audience.status).toBe(201);
    const opened = await openConsole('/console/contacts');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByRole('heading', { name: 'Import a CSV' }).waitFor();
    const csv = 'phone,name,attributes.tier\n+14155550181,Ada Import,gold\n555-0182,Bad phone,silver\n+14155550183,Alan Import,gold\n';
    await page.getByLabel('Contacts CSV', { exact: true }).setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByTestId('contact-import-preview').getByRole('cell', { name: '555-0182,Bad phone,silver', exact: true }).waitFor();
    await page.getByLabel('Add them to the audience', { exact: true }).selectOption({ label: 'Imported in the console' });
    await page.getByLabel('A contact already there', { exact: true }).selectOption('skip');
    await page.getByRole('button', { name: 'Import contacts' }).click();
    // The job's end comes by the events subscription; its counts and refused row as the API has them.
    const job = page.locator('[data-testid="contact-import-job"][data-status="completed"]');
    await job.waitFor();
    expect(await job.locator('.notice').innerText()).toBe('Import completed: 3 rows read; 2 created, 0 updated, 0 skipped, 1 refused.');
    const sent = opened.requests.find((request) => /^PUT .*\/api\/imports\/[^/]+\/file$/.test(request))!;
    const importId = /imports\/([^/]+)\/file/.exec(sent)![1]!;
    expect((await acme.rest.get(`/api/imports/${importId}`)).body).toMatchObject({
      status: 'completed',
      mode: 'skip',
      audienceId: audience.body.id,
      refused: 1,
    });
    const refusedCsv = await (await fetch(`${app.baseUrl}/api/imports/${importId}/refused`, { headers: { 'x-api-key': acme.apiKey } })).text();
    const reason = /^3,(.*),555-0182,Bad phone,silver$/m.exec(refusedCsv)![1]!.replace(/^"|"$/g, '').replace(/""/g, '"');
    const refused = job.getByRole('region', { name: 'Rows refused' }).getByRole('row').nth(1);
    await refused.waitFor();
    expect(await refused.getByRole('cell').allInnerTexts()).toEqual(['3', reason]);
    const download = job.getByRole('link', { name: 'Download the refused rows (CSV)' });
    expect([await download.getAttribute('download'), (await download.getAttribute('href'))?.startsWith('blob:')]).toEqual([
      `import-${importId}-refused.csv`,
      true,
    ]);
    expect(opened.requests).toContain(`GET ${app.baseUrl}/api/imports/${importId}/refused`);
    await page.getByRole('cell', { name: 'Ada Import', exact: true }).waitFor();
    expect((await acme.rest.get(`/api/audience/${audience.body.id}`)).body.contactCount).toBe(2);
    await look(page, 'contacts-import');

    // A header the API refuses: the job ends failed, with the API's reason.
    await page
      .getByLabel('Contacts CSV', { exact: true })
      .setInputFiles({ name: 'wrong.csv', mimeType: 'text/csv', buffer: Buffer.from('phone,colour\n+14155550184,red\n') });
    await page.getByRole('button', { name: 'Import contacts' }).click();
    const failed = page.locator('[data-testid="contact-import-job"][data-status="failed"]');
    await failed.waitFor();
    expect(await failed.innerText()).toContain('colour');
    await opened.close();

    // An organization with no event yet (nothing to replay from): the file waits for the live socket, and the end still comes.
    const fresh = await app.organization('Fresh Console');
    expect((await fresh.rest.get('/api/events')).body.data).toEqual([]);
    const first = await openConsole('/console/contacts');
    await signIn(first.page, fresh.apiKey);
    await first.page
      .getByLabel('Contacts CSV', { exact: true })
      .setInputFiles({ name: 'one.csv', mimeType: 'text/csv', buffer: Buffer.from('phone\n+14155550185\n') });
    await first.page.getByRole('button', { name: 'Import contacts' }).click();
    await first.page.locator('[data-testid="contact-import-job"][data-status="completed"]').getByText('Import completed: 1 row read; 1 created').waitFor();
    await first.close();

    const asMember = await openConsole('/console/contacts');
    await signIn(asMember.page, member.apiKey);
    await asMember.page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
    await asMember.page.getByRole('cell', { name: 'Ada Import', exact: true }).waitFor();
    expect(await asMember.page.getByRole('heading', { name: 'Import a CSV' }).count()).toBe(0);
    expect(await asMember.page.getByLabel('Contacts CSV').count()).toBe(0);
    await asMember.close();
  });

  it('lists past contact imports with their state and counts, and cancels and resumes them where the API allows', async () => {
    const worker = app.gateway.services.contactImportWorker;
    // One waiting for its file, and one whose file is queued while the worker is stopped.
    const { createContactImport: waiting } = await acme.graphql.ok(CreateContactImportDocument, {});
    await worker.stop();
    let started = false;
    let queuedId: string;
    try {
      const sent = await fetch(`${app.baseUrl}/api/imports?mode=skip`, {
        method: 'POST',
        headers: { 'x-api-key': acme.apiKey, 'content-type': 'text/csv' },
        body: 'phone,name\n+14155550171,Past Import\n+14155550172,Later Import\n',
      });
      const queued = (await sent.json()) as { id: string; status: string };
      expect([sent.status, queued.status]).toEqual([202, 'queued']);
      queuedId = queued.id;

      const opened = await openConsole('/console/contacts');
      const { page } = opened;
      await signIn(page, acme.apiKey);
      await page.getByRole('link', { name: 'Past imports' }).click();
      await page.getByRole('heading', { name: 'Contact imports', level: 1 }).waitFor();
      const row = (id: string, status: string) => page.locator(`tr[data-import="${id}"][data-status="${status}"]`);
      await row(waiting.id, 'awaiting_file').waitFor();
      expect(await row(queuedId, 'queued').getByRole('cell').nth(2).innerText()).toBe('skip by phone');
      await look(page, 'contact-imports');

      // Waiting for its file: cancelled, and then nothing to resume (it has no file), as the API says.
      await row(waiting.id, 'awaiting_file')
        .getByRole('button', { name: /^Cancel/ })
        .click();
      await row(waiting.id, 'cancelled').waitFor();
      expect(await row(waiting.id, 'cancelled').getByRole('button').count()).toBe(0);
      expect((await acme.rest.post(`/api/imports/${waiting.id}/resume`)).status).toBe(409);

      // Queued with its file: cancelled, then resumed; the worker runs it, and its end comes by the events subscription.
      await row(queuedId, 'queued')
        .getByRole('button', { name: /^Cancel/ })
        .click();
      await row(queuedId, 'cancelled')
        .getByRole('button', { name: /^Resume/ })
        .waitFor();
      expect((await acme.rest.get(`/api/imports/${queuedId}`)).body.status).toBe('cancelled');
      worker.start();
      started = true;
      await row(queuedId, 'cancelled')
        .getByRole('button', { name: /^Resume/ })
        .click();
      const done = row(queuedId, 'completed');
      await done.waitFor();
      const rest = (await acme.rest.get(`/api/imports/${queuedId}`)).body;
      expect(rest).toMatchObject({ status: 'completed', rowsRead: 2, imported: 2 });
      expect((await done.getByRole('cell').allInnerTexts()).slice(3, 9)).toEqual(['2', '2', '0', '0', '0', '0']);
      expect(await done.getByRole('button').count()).toBe(0);
      await opened.close();

      // A member sees the imports, without a button.
      const asMember = await openConsole('/console/contacts/imports');
      await signIn(asMember.page, member.apiKey);
      await asMember.page.locator(`tr[data-import="${queuedId}"][data-status="completed"]`).waitFor();
      expect(await asMember.page.getByRole('region', { name: 'Contact imports' }).getByRole('button').count()).toBe(0);
      await asMember.close();
    } finally {
      if (!started) worker.start();
    }
  });

  it('lists, creates, changes, counts and deletes a segment; a filter the API refuses is answered beside its field', async () => {
    const seeded = await acme.rest.post('/api/contacts/import', {
      contacts: [
        { name: 'Sam Gold', phone: '+14155550161', attributes: { segtier: 'gold' } },
        { name: 'Sue Gold', phone: '+14155550162', attributes: { segtier: 'gold' } },
        { name: 'Sid Silver', phone: '+14155550163', attributes: { segtier: 'silver' } },
      ],
    });
    expect(seeded.status).toBeLessThan(300);
    const opened = await openConsole('/console/audiences');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Segments' }).click();
    await page.getByRole('heading', { name: 'Segments', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'New segment' });
    await form.getByLabel('Name', { exact: true }).fill('Gold desk');
    // A rule the API refuses: its words beside the filter, as REST answers the same filter.
    const bad = { field: 'attributes.segtier', op: 'like', value: 'g%' };
    await form.getByLabel('Filter (JSON)', { exact: true }).fill(JSON.stringify(bad));
    await form.getByRole('button', { name: 'Create segment' }).click();
    const rest = await other.rest.post('/api/audience', { name: 'Gold desk', filter: bad });
    expect(rest.status).toBe(400);
    const words = (rest.body.errors as { field: string; message: string }[]).filter((error) => error.field === 'filter').map((error) => error.message);
    const beside = form.locator('.field-error[data-field="filter"]');
    await beside.filter({ hasText: words[0]! }).waitFor();
    expect(await beside.innerText()).toBe(words.join('; '));
    // The count while the filter is typed (segmentPreview, before anything is saved) says the same refusal.
    const preview = form.getByTestId('filter-preview');
    await preview.filter({ hasText: `Not counted: ${words.join('; ')}` }).waitFor();
    // Text that is not JSON is refused beside the field before anything is sent.
    await form.getByLabel('Filter (JSON)', { exact: true }).fill('{"field": ');
    await form.getByRole('button', { name: 'Create segment' }).click();
    await beside.filter({ hasText: 'Not JSON' }).waitFor();
    await preview.filter({ hasText: 'Not JSON yet' }).waitFor();
    // A filter the API takes: how many contacts it matches, counted live before it is saved, and nothing saved.
    const segmentsBefore = (await acme.rest.get('/api/audience?limit=100')).body.meta.total;
    await form.getByLabel('Filter (JSON)', { exact: true }).fill('{"field": "attributes.segtier", "op": "eq", "value": "gold"}');
    await preview.filter({ hasText: '2 contacts match this filter now (not saved yet).' }).waitFor();
    expect(await preview.getAttribute('aria-busy')).toBe('false');
    expect((await acme.rest.get('/api/audience?limit=100')).body.meta.total).toBe(segmentsBefore);
    expect((await acme.rest.post('/api/audience/preview', { filter: { field: 'attributes.segtier', op: 'eq', value: 'gold' } })).body).toEqual({
      contactCount: 2,
    });
    await form.getByRole('button', { name: 'Create segment' }).click();

    // Its page: how many match now, and the first of them.
    await page.getByRole('heading', { name: 'Gold desk', level: 1 }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const count = page.getByTestId('segment-count');
    await count.getByText('2 contacts match now').waitFor();
    expect((await acme.rest.get(`/api/audience/${id}`)).body).toMatchObject({ kind: 'dynamic', contactCount: 2 });
    await page.getByRole('region', { name: 'First contacts matching' }).getByRole('cell', { name: 'Sue Gold', exact: true }).waitFor();
    await look(page, 'segment');

    // A new filter: counted as it is typed, the saved count unchanged until it is saved; then saved and counted again.
    await page.getByLabel('Filter (JSON)', { exact: true }).fill('{"field": "attributes.segtier", "op": "in", "value": ["gold", "silver"]}');
    await page.getByTestId('filter-preview').filter({ hasText: '3 contacts match this filter now' }).waitFor();
    expect(await count.innerText()).toContain('2 contacts match now');
    expect((await acme.rest.get(`/api/audience/${id}`)).body.contactCount).toBe(2);
    await page.getByRole('button', { name: 'Save and count' }).click();
    await count.getByText('3 contacts match now').waitFor();
    expect((await acme.rest.get(`/api/audience/${id}`)).body).toMatchObject({
      contactCount: 3,
      filter: { field: 'attributes.segtier', op: 'in', value: ['gold', 'silver'] },
    });
    // A contact that comes to match is counted on the next read.
    expect((await acme.rest.post('/api/contacts', { name: 'Sal Silver', phone: '+14155550164', attributes: { segtier: 'silver' } })).status).toBe(201);
    await page.getByRole('button', { name: 'Count again' }).click();
    await count.getByText('4 contacts match now').waitFor();

    await page.getByRole('link', { name: 'All segments' }).click();
    const listed = page
      .getByRole('region', { name: 'Segments' })
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'Gold desk' }) });
    await listed.waitFor();
    expect((await listed.getByRole('cell').allInnerTexts()).slice(0, 2)).toEqual(['Gold desk', '4']);
    await look(page, 'segments');

    // A member sees the segment and its count, without a form.
    const asMember = await openConsole(`/console/segments/${id}`);
    await signIn(asMember.page, member.apiKey);
    await asMember.page.getByTestId('segment-count').getByText('4 contacts match now').waitFor();
    expect(await asMember.page.getByRole('button', { name: 'Save and count' }).count()).toBe(0);
    await asMember.close();

    await page.getByRole('link', { name: 'Gold desk' }).click();
    await page.getByRole('button', { name: 'Delete the segment' }).click();
    await page.getByRole('heading', { name: 'Segments', level: 1 }).waitFor();
    expect((await acme.rest.get(`/api/audience/${id}`)).status).toBe(404);
    await opened.close();
  });

  it('opens a web call to the agent: "Talk to this agent" opens the talk page with its token in a new tab; a batch agent’s refusal is shown', async () => {
    const id = (await acme.rest.get('/api/agents?search=Ava')).body.data[0].id as string;
    const opened = await openConsole(`/console/agents/${id}`);
    const { page, context } = opened;
    await signIn(page, member.apiKey);
    const [tab] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: 'Talk to this agent' }).click()]);
    // The talk page read a token from its fragment (without one it says so), then took it out of the address.
    await tab.locator('#talk-status').filter({ hasText: 'Press the button, then allow the microphone.' }).waitFor();
    expect(new URL(tab.url()).pathname).toBe('/talk');
    expect(await page.getByTestId('talk-link').getAttribute('href')).toMatch(new RegExp(`^${app.baseUrl}/talk#token=wct_[\\w-]{43}$`));
    expect(opened.requests).toContain(`GET ${app.baseUrl}/talk`);
    await tab.close();
    await look(page, 'agent-talk');

    const batch = await acme.rest.post('/api/agents', {
      name: 'Batch desk',
      instructions: 'Hi.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { pipelineMode: 'batch' },
    });
    expect(batch.status).toBe(201);
    const rest = await acme.rest.post('/api/web-calls', { agentId: batch.body.id });
    expect([rest.status, rest.body.code]).toEqual([409, 'CONFLICT']);
    await page.goto(`${app.baseUrl}/console/agents/${batch.body.id}`);
    await page.getByRole('button', { name: 'Talk to this agent' }).click();
    const refusal = page.locator('.talk .form-error[data-code="CONFLICT"]');
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain(rest.body.detail);
    await opened.close();
  });

  it('lists an agent’s HTTP tools on its page, and a test message’s tool calls beside its reply', async () => {
    const tool = await acme.rest.post('/api/tools', {
      name: 'lookup_order',
      description: 'Look up an order by its id',
      parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
      url: 'http://127.0.0.1:9/orders',
    });
    expect(tool.status).toBe(201);
    const agent = await acme.rest.post('/api/agents', {
      name: 'Order desk',
      instructions: 'You look orders up.',
      modelConfig: { model: 'builtin/echo' },
      toolIds: [tool.body.id],
    });
    expect(agent.status).toBe(201);
    const opened = await openConsole(`/console/agents/${agent.body.id}`);
    const { page } = opened;
    await signIn(page, member.apiKey);
    const listed = page.getByTestId('agent-http-tools').getByRole('listitem');
    await listed.filter({ hasText: 'Look up an order by its id' }).waitFor();
    expect(await listed.innerText()).toContain('lookup_order — POST http://127.0.0.1:9/orders');
    // Arguments outside the tool's schema: nothing is sent, the call is recorded rejected, as on REST.
    const message = 'call lookup_order {"orderId": 42}';
    const rest = await acme.rest.post(`/api/agents/${agent.body.id}/test`, { message });
    expect(rest.body.toolCalls).toEqual([expect.objectContaining({ tool: 'lookup_order', status: 'rejected' })]);
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill(message);
    await page.getByRole('button', { name: 'Send' }).click();
    const call = page.getByTestId('tool-calls').getByRole('listitem');
    await call.waitFor();
    expect(await call.getAttribute('data-status')).toBe('rejected');
    expect(await call.innerText()).toMatch(/^lookup_order rejected, \d+ ms with \{"orderId":42\}: /);
    expect(await call.innerText()).toContain(rest.body.toolCalls[0].error);
    await look(page, 'agent-tools');
    await opened.close();
  });

  it('edits an agent’s tools on its page: an HTTP tool and an MCP server added, changed and removed, the secret once, the API’s field errors beside their fields', async () => {
    const mcp = await new McpDouble().start();
    mcp.auth = { name: 'Authorization', value: 'Bearer mcp-secret-4711' };
    mcp.tools = [
      {
        name: 'find_slot',
        description: 'Find a free slot',
        inputSchema: { type: 'object', properties: { day: { type: 'string' } } },
        answer: () => ({ text: 'ok' }),
      },
    ];
    try {
      const agent = await acme.rest.post('/api/agents', { name: 'Tool desk', instructions: 'You book slots.', modelConfig: { model: 'builtin/echo' } });
      expect(agent.status).toBe(201);
      const opened = await openConsole(`/console/agents/${agent.body.id}`);
      const { page } = opened;
      await signIn(page, acme.apiKey);
      const editor = page.getByRole('region', { name: 'Tools', exact: true });
      // Other tests of this file may have made tools of the organization: none of them is the agent's.
      await editor.getByRole('button', { name: 'Add an HTTP tool' }).waitFor();

      // A URL the API refuses: its words beside the field, the same as REST answers for the same input.
      await editor.getByRole('button', { name: 'Add an HTTP tool' }).click();
      const form = page.getByRole('form', { name: 'Add an HTTP tool' });
      await form.getByLabel('Tool name', { exact: true }).fill('book_slot');
      await form.getByLabel('What it does', { exact: true }).fill('Books a slot');
      await form.getByLabel('Tool URL', { exact: true }).fill('ftp://127.0.0.1/book');
      await form.getByRole('button', { name: 'Add the tool' }).click();
      const rest = await other.rest.post('/api/tools', {
        name: 'book_slot',
        description: 'Books a slot',
        method: 'POST',
        url: 'ftp://127.0.0.1/book',
        parameters: JSON.parse(await form.getByLabel('Parameters (JSON Schema)', { exact: true }).inputValue()),
      });
      expect(rest.status).toBe(400);
      const urlError = (rest.body.errors as { field: string; message: string }[]).find((error) => error.field === 'url')!;
      await form.locator('.field-error[data-field="url"]').filter({ hasText: urlError.message }).waitFor();
      expect(await form.getByLabel('Tool URL', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      // Parameters that are not JSON are refused beside their field before anything is sent.
      await form.getByLabel('Tool URL', { exact: true }).fill('http://127.0.0.1:9/book');
      await form.getByLabel('Parameters (JSON Schema)', { exact: true }).fill('{ "type": ');
      await form.getByRole('button', { name: 'Add the tool' }).click();
      await form.locator('.field-error[data-field="parameters"]').filter({ hasText: 'Not JSON' }).waitFor();
      await form.getByLabel('Parameters (JSON Schema)', { exact: true }).fill('{"type":"object","properties":{"day":{"type":"string"}}}');
      await form.getByLabel('Header name (optional)', { exact: true }).fill('X-Desk-Key');
      await form.getByLabel('Header value', { exact: true }).fill('header-secret-0815');
      await form.getByRole('button', { name: 'Add the tool' }).click();

      // The signing secret once; the agent lists the new tool.
      const secret = await page.locator('[data-secret]').innerText();
      expect(secret).toMatch(/^whsec_/);
      const ticked = editor.getByLabel('The agent may call book_slot', { exact: true });
      const saved = editor.getByTestId('tools-saved');
      await saved.filter({ hasText: 'The agent may call book_slot' }).waitFor();
      expect(await ticked.isChecked()).toBe(true);
      const tools = (await acme.rest.get('/api/tools')).body.data as { id: string; name: string; headerNames: string[]; secretHint: string }[];
      const tool = tools.find((listed) => listed.name === 'book_slot')!;
      expect([tool.headerNames, secret.endsWith(tool.secretHint)]).toEqual([['X-Desk-Key'], true]);
      expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).body.toolIds).toEqual([tool.id]);
      await look(page, 'agent-tools-editor');
      await page.getByRole('button', { name: 'I have copied it' }).click();
      expect(await page.locator('[data-secret]').count()).toBe(0);
      const content = await page.content();
      expect([content.includes(secret), content.includes('header-secret-0815')]).toEqual([false, false]);

      // Changed: a new description; unticked: the agent no longer lists it; deleted.
      await editor.getByRole('button', { name: 'Edit book_slot', exact: true }).click();
      const edit = page.getByRole('form', { name: 'Change the tool book_slot' });
      await edit.getByLabel('What it does', { exact: true }).fill('Books a free slot on the calendar');
      await edit.getByRole('button', { name: 'Save the tool' }).click();
      // The row again (a textarea's text is its value too: the form's own words are not the answer), read once saved.
      await editor.locator('[data-tool="book_slot"]').filter({ hasText: 'Books a free slot on the calendar' }).waitFor();
      expect((await acme.rest.get(`/api/tools/${tool.id}`)).body).toMatchObject({
        description: 'Books a free slot on the calendar',
        headerNames: ['X-Desk-Key'],
      });
      // Deleting a tool the agent lists is the API's CONFLICT, shown as it comes.
      await editor.getByRole('button', { name: 'Delete book_slot', exact: true }).click();
      await editor.locator('.form-error[data-code="CONFLICT"]').waitFor();
      await ticked.click();
      await saved.filter({ hasText: 'The agent no longer calls book_slot' }).waitFor();
      expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).body.toolIds).toEqual([]);
      await editor.getByRole('button', { name: 'Delete book_slot', exact: true }).click();
      await editor.locator('[data-tool="book_slot"]').waitFor({ state: 'detached' });
      expect((await acme.rest.get(`/api/tools/${tool.id}`)).status).toBe(404);

      // An MCP server: a bad URL beside its field, then added with its auth header (never shown), its tool ticked for the agent.
      await editor.getByRole('button', { name: 'Add an MCP server' }).click();
      const server = page.getByRole('form', { name: 'Add an MCP server' });
      await server.getByLabel('Server name', { exact: true }).fill('Calendar');
      await server.getByLabel('Server URL', { exact: true }).fill('not a url');
      await server.getByRole('button', { name: 'Add the server' }).click();
      const restServer = await other.rest.post('/api/mcp-servers', { name: 'Calendar', url: 'not a url' });
      expect(restServer.status).toBe(400);
      const serverUrlError = (restServer.body.errors as { field: string; message: string }[]).find((error) => error.field === 'url')!;
      await server.locator('.field-error[data-field="url"]').filter({ hasText: serverUrlError.message }).waitFor();
      await server.getByLabel('Server URL', { exact: true }).fill(mcp.url);
      await server.getByLabel('Auth header name (optional)', { exact: true }).fill('Authorization');
      await server.getByLabel('Auth header value', { exact: true }).fill('Bearer mcp-secret-4711');
      await server.getByRole('button', { name: 'Add the server' }).click();
      const slot = editor.getByLabel('The agent may call find_slot — Find a free slot', { exact: true });
      await slot.click();
      await saved.filter({ hasText: 'The agent may call find_slot' }).waitFor();
      const servers = ((await acme.rest.get('/api/mcp-servers')).body.data as { id: string; name: string; status: string }[]).filter(
        (listed) => listed.name === 'Calendar',
      );
      expect(servers.map(({ status }) => status)).toEqual(['ready']);
      expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).body.mcpTools).toEqual([{ serverId: servers[0]!.id, names: ['find_slot'] }]);
      expect(await page.content()).not.toContain('mcp-secret-4711');
      await look(page, 'agent-tools-mcp');
      await editor.getByRole('button', { name: 'Edit Calendar', exact: true }).click();
      const serverEdit = page.getByRole('form', { name: 'Change the MCP server Calendar' });
      await serverEdit.getByLabel('Server name', { exact: true }).fill('Calendar desk');
      await serverEdit.getByRole('button', { name: 'Save the server' }).click();
      await editor.locator('[data-server="Calendar desk"]').waitFor();
      await slot.click();
      await saved.filter({ hasText: 'The agent no longer calls find_slot' }).waitFor();
      expect((await acme.rest.get(`/api/agents/${agent.body.id}`)).body.mcpTools).toEqual([]);
      await editor.getByRole('button', { name: 'Delete Calendar desk', exact: true }).click();
      await editor.locator('[data-server="Calendar desk"]').waitFor({ state: 'detached' });
      expect((await acme.rest.get(`/api/mcp-servers/${servers[0]!.id}`)).status).toBe(404);
      expect(mcp.problems).toEqual([]);
      await opened.close();
    } finally {
      await mcp.close();
    }
  });

  it('connects Twilio and Telnyx accounts: the carrier checks them, their secrets never come back to the page, a token rotated', async () => {
    const opened = await openConsole('/console/settings/telephony');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    const form = page.getByRole('form', { name: 'New carrier connection' });
    await form.getByLabel('Carrier', { exact: true }).selectOption('telnyx');
    // The form is the carrier module's (GET /api/carriers, the carriers query): its fields, labels and hints, in its order.
    const telnyxForm = ((await acme.rest.get('/api/carriers')).body as { kind: string; connectionFields: { label: string; hint: string }[] }[]).find(
      (carrier) => carrier.kind === 'telnyx',
    )!.connectionFields;
    expect(await form.locator('label').allInnerTexts()).toEqual(['Carrier', 'Name', ...telnyxForm.map((field) => field.label), 'Calls a second']);
    expect(await form.locator('.hint').allInnerTexts()).toEqual([...telnyxForm.map((field) => field.hint), '1 to 100; empty: 1']);
    await form.getByLabel('Name', { exact: true }).fill('Telnyx line');
    await form.getByLabel('Account id', { exact: true }).fill(telnyxFake.accountSid);
    await form.getByLabel('API key', { exact: true }).fill(telnyxFake.apiKey);
    await form.getByLabel('Public key', { exact: true }).fill('not-a-key');
    await form.getByLabel('TeXML application id', { exact: true }).fill('2000000000000000001');
    await form.getByRole('button', { name: 'Add connection' }).click();
    // A public key of the wrong form: the API's words beside it, as REST answers the same input; the API key is gone from the field.
    const rest = await other.rest.post('/api/carrier-connections', {
      carrier: 'telnyx',
      name: 'Telnyx line',
      accountSid: telnyxFake.accountSid,
      authToken: telnyxFake.apiKey,
      publicKey: 'not-a-key',
      applicationId: '2000000000000000001',
    });
    expect(rest.status).toBe(400);
    const words = (rest.body.errors as { field: string; message: string }[]).find((error) => error.field === 'publicKey')!.message;
    await form.locator('.field-error[data-field="publicKey"]').filter({ hasText: words }).waitFor();
    expect(await form.getByLabel('API key', { exact: true }).inputValue()).toBe('');
    await form.getByLabel('API key', { exact: true }).fill(telnyxFake.apiKey);
    await form.getByLabel('Public key', { exact: true }).fill(telnyxFake.publicKey);
    await form.getByRole('button', { name: 'Add connection' }).click();
    const connections = page.getByRole('region', { name: 'Carrier connections', exact: true });
    const telnyxRow = connections.getByRole('row').filter({ hasText: 'Telnyx line' });
    await telnyxRow.waitFor();
    expect((await telnyxRow.getByRole('cell').allInnerTexts()).slice(0, 4)).toEqual([
      'Telnyx line',
      'telnyx',
      telnyxFake.accountSid,
      `…${telnyxFake.apiKey.slice(-4)}`,
    ]);
    expect(await telnyxRow.getByRole('cell').nth(4).innerText()).toContain(telnyxFake.publicKey);

    // Twilio, its auth token checked by the carrier; then the token rotated at Twilio and given to the gateway.
    await form.getByLabel('Carrier', { exact: true }).selectOption('twilio');
    await form.getByLabel('Name', { exact: true }).fill('Twilio line');
    await form.getByLabel('Account SID', { exact: true }).fill(twilioFake.accountSid);
    await form.getByLabel('Auth token', { exact: true }).fill(twilioFake.authToken);
    await form.getByRole('button', { name: 'Add connection' }).click();
    const twilioRow = connections.getByRole('row').filter({ hasText: 'Twilio line' });
    await twilioRow.waitFor();
    expect((await twilioRow.getByRole('cell').allInnerTexts()).slice(0, 5)).toEqual([
      'Twilio line',
      'twilio',
      twilioFake.accountSid,
      `…${twilioFake.authToken.slice(-4)}`,
      'the auth token',
    ]);
    const first = twilioFake.authToken;
    const rotated = randomBytes(16).toString('hex');
    twilioFake.rotate(rotated);
    await twilioRow.getByRole('button', { name: 'Edit Twilio line' }).click();
    const edit = page.getByRole('form', { name: 'Change the connection Twilio line' });
    await edit.getByLabel('New auth token', { exact: true }).fill(rotated);
    await edit.getByLabel('Calls a second', { exact: true }).fill('3');
    await edit.getByRole('button', { name: 'Save the connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: Twilio line.' }).waitFor();
    await twilioRow.getByRole('cell', { name: `…${rotated.slice(-4)}`, exact: true }).waitFor();
    const stored = ((await acme.rest.get('/api/carrier-connections')).body.data as { name: string; authTokenLast4: string; callsPerSecond: number }[]).find(
      (connection) => connection.name === 'Twilio line',
    )!;
    expect([stored.authTokenLast4, stored.callsPerSecond]).toEqual([rotated.slice(-4), 3]);
    const content = await page.content();
    expect([content.includes(telnyxFake.apiKey), content.includes(first), content.includes(rotated)]).toEqual([false, false, false]);
    await look(page, 'settings-carriers');
    await opened.close();
  });

  it('shows the settings: a key’s secret once, a webhook endpoint’s deliveries sent again, carriers, the team', async () => {
    const opened = await openConsole('/console/settings');
    const { page } = opened;
    await signIn(page, acme.apiKey);
    await page.getByLabel('Name', { exact: true }).fill('Laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.locator('[data-secret]').innerText();
    expect(secret).toMatch(/^key_[A-Za-z0-9]{32,}$/);
    expect((await app.rest({ 'x-api-key': secret }).get('/api/users/me')).status).toBe(200);
    await look(page, 'settings-api-keys');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.locator('[data-secret]').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    await page.goto(`${app.baseUrl}/console/settings/webhooks`);
    await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/hook`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('[data-secret]').waitFor();
    expect(await page.locator('[data-secret]').innerText()).toMatch(/^whsec_/);
    await look(page, 'settings-webhooks');
    await page.getByRole('link', { name: `${receiver.url}/hook` }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.locator('td code', { hasText: 'webhook.test' }).waitFor();
    // An event after the endpoint was made has its delivery; "Send again" makes another of the same event.
    const agent = await acme.rest.post('/api/agents', { name: 'Hooked', instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
    expect((await acme.rest.post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Send again agent.activated' }).click();
    await page.locator('td code', { hasText: 'agent.activated' }).nth(1).waitFor();
    expect(await page.locator('td code', { hasText: 'agent.activated' }).count()).toBe(2);
    await look(page, 'settings-webhook');

    await page.goto(`${app.baseUrl}/console/settings/telephony`);
    // A connection's credentials are checked with the carrier before it is stored: here the API refuses the token's form first, beside it.
    await page.getByLabel('Name', { exact: true }).first().fill('Main line');
    await page.getByLabel('Account SID', { exact: true }).fill(`AC${'0'.repeat(32)}`);
    await page.getByLabel('Auth token', { exact: true }).fill('secret-token-1234');
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.locator('.field-error[data-field="authToken"]').filter({ hasText: 'authToken must be a Twilio auth token' }).waitFor();
    await look(page, 'settings-telephony');

    await page.goto(`${app.baseUrl}/console/settings/team`);
    await page.getByRole('cell', { name: member.email, exact: true }).waitFor();
    await look(page, 'settings-team');
    await opened.close();
  });
});
