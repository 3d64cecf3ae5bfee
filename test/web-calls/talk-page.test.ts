import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { ulawToPcm } from '../../src/modules/voice/realtime/audio.js';
import { encodeSpeech } from '../../src/modules/voice/streaming/builtin-speech.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { browserAvailable, launchChromium } from '../support/browser.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';

// The /talk page and the widget in headless Chromium, its microphone a fake one playing a WAV file
// (the builtin pair's "voice" saying a sentence): the words reach the agent, its audio plays, the
// transcript shows both sides; on the offline streaming pair and on the OpenAI Realtime double.
// Everything waits on the page's state and the double's events, never on a clock.

const SENTENCE = 'I would like a table';

/**
 * A WAV file (PCM16, 8 kHz, mono) of the sentence said `times` times, two seconds apart (the streaming
 * call never falls silent long enough to end), then `tailMs` of silence (a reply heard to its end).
 */
function sentenceWav(path: string, times: number, tailMs = 0): void {
  const silence = (ms: number) => Buffer.alloc(ms * 8, 0xff);
  const saying = Buffer.concat([silence(500), encodeSpeech(SENTENCE), silence(1500)]);
  const pcm = ulawToPcm(Buffer.concat([...Array.from({ length: times }, () => saying), silence(tailMs)]));
  const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  writeFileSync(path, Buffer.concat([header, data]));
}

(browserAvailable ? describe : describe.skip)('web calls in headless Chromium', () => {
  let app: TestApp;
  let acme: TestOrganization;
  let realtime: FakeRealtime;
  let browser: Browser;
  let business: Server;
  let businessOrigin: string;
  let businessPage = '';
  let fakeMicrophone: string[];
  let onceWav: string;
  const microphone = (wav: string) => [
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-audio-capture=${wav}`,
    '--autoplay-policy=no-user-gesture-required',
  ];

  beforeAll(async () => {
    realtime = await startFakeRealtime();
    app = await startTestApp({ providers: { ...loadConfig({}).providers, openaiApiKey: 'sk-test-realtime-key', openaiRealtimeUrl: realtime.url } });
    acme = await app.organization('Acme');
    await acme.grantCredits(10);
    const wav = join(tmpdir(), `web-call-${process.pid}.wav`);
    sentenceWav(wav, 6);
    onceWav = join(tmpdir(), `web-call-once-${process.pid}.wav`);
    sentenceWav(onceWav, 1, 20_000);
    fakeMicrophone = microphone(wav);
    // A business's own site, on another origin (localhost, not 127.0.0.1), that embeds the widget.
    business = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(businessPage));
    await new Promise<void>((resolve) => business.listen(0, '127.0.0.1', resolve));
    businessOrigin = `http://localhost:${(business.address() as AddressInfo).port}`;
  });
  // A browser of its own for each test: its fake microphone starts at the head of the file, and no test
  // inherits another's audio devices.
  beforeEach(async () => {
    browser = await launchChromium(fakeMicrophone);
  });
  afterEach(() => browser?.close());
  afterAll(async () => {
    await new Promise((resolve) => business?.close(resolve));
    await app?.close();
    await realtime?.close();
  });

  const agent = async (voiceConfig: Record<string, unknown>) =>
    (await acme.rest.post('/api/agents', { name: 'Front desk', instructions: 'Answer the caller.', modelConfig: { model: 'builtin/echo' }, voiceConfig })).body
      .id as string;
  const ticket = async (agentId: string) => (await acme.rest.post('/api/web-calls', { agentId })).body as { token: string; url: string };

  /** A context whose network ends at the gateway and `origins`, with the microphone allowed there (or not). */
  async function context(microphone: boolean, origins: string[] = []): Promise<{ context: BrowserContext; blocked: string[] }> {
    const allowed = [app.baseUrl, ...origins];
    const context = await browser.newContext();
    if (microphone) for (const origin of allowed) await context.grantPermissions(['microphone'], { origin });
    const blocked: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (allowed.some((origin) => url.startsWith(origin))) return route.continue();
      blocked.push(url);
      return route.abort('internetdisconnected');
    });
    return { context, blocked };
  }

  /** A page that records its CSP violations and console errors. */
  async function watched(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems: string[] = [];
    await page.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP ' + event.violatedDirective + ' ' + event.blockedURI));",
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return { page, problems };
  }

  /** Waits for `selector` inside the panel `root`; a failure shows the panel as it was (its state and transcript). */
  async function shows(page: Page, root: string, selector: string, text?: string): Promise<void> {
    try {
      await page
        .locator(`${root} ${selector}`, text ? { hasText: text } : {})
        .first()
        .waitFor();
    } catch (error) {
      const panel = await page
        .locator(root)
        .evaluate((element) => element.outerHTML)
        .catch(() => '(no panel)');
      throw new Error(`${(error as Error).message}\nThe panel was: ${panel}`, { cause: error });
    }
  }

  /** Resolves once the panel says some of the agent's audio has played (its playback worklet's count). A selector,
   * not a page function: the page's CSP (script-src 'self') refuses the eval Playwright polls a string with. */
  const playedMs = (page: Page, selector: string) => page.locator(`${selector}[data-played-ms]:not([data-played-ms="0"])`).waitFor();

  it('on the offline streaming pair: the /talk page hears the caller, plays the agent, and shows both sides live', async () => {
    const { url, token } = await ticket(await agent({ pipelineMode: 'streaming', sttProvider: 'builtin', ttsProvider: 'builtin' }));
    expect(url).toBe(`/talk#token=${token}`);
    const { context: browserContext, blocked } = await context(true);
    const { page, problems } = await watched(browserContext);
    await page.goto(`${app.baseUrl}${url}&echo=off`);
    // The token leaves the address bar at once.
    expect(new URL(page.url()).hash).toBe('');
    await page.click('#talk-button');
    await page.locator('#talk[data-state="live"]').waitFor();
    await shows(page, '#talk', 'li[data-role="caller"]', SENTENCE);
    // builtin/echo answers with what it heard.
    await shows(page, '#talk', 'li[data-role="agent"]', SENTENCE);
    await playedMs(page, '#talk');
    const callId = await page.locator('#talk').getAttribute('data-call-id');
    const call = await acme.rest.get(`/api/calls/${callId}`);
    expect(call.body).toMatchObject({ channel: 'web', status: 'in_progress' });
    await page.click('#talk-button');
    await page.locator('#talk[data-state="ended"]').waitFor();
    expect(problems).toEqual([]);
    expect(blocked).toEqual([]);
    await browserContext.close();
  });

  it('on the speech-to-speech double: the caller’s audio reaches it, its reply plays, the transcript shows both', async () => {
    realtime.script.push({ caller: 'Can I book a table for two?', reply: [{ text: 'Yes, at seven tonight.' }] });
    // The caller says it once and listens: nothing speaks over the reply.
    await browser.close();
    browser = await launchChromium(microphone(onceWav));
    const { url } = await ticket(await agent({ pipelineMode: 'sts', stsProvider: 'openai' }));
    const { context: browserContext } = await context(true);
    const { page, problems } = await watched(browserContext);
    await page.goto(`${app.baseUrl}${url}`);
    await page.click('#talk-button');
    const session = await realtime.nextSession();
    await shows(page, '#talk', 'li[data-role="caller"]', 'Can I book a table for two?');
    await shows(page, '#talk', 'li[data-role="agent"]', 'Yes, at seven tonight.');
    await playedMs(page, '#talk');
    expect(session.audioChunks.length).toBeGreaterThan(0);
    expect(realtime.problems).toEqual([]);
    expect(problems).toEqual([]);
    await browserContext.close();
  });

  it('says plainly that the microphone is blocked when it is refused, and opens no call', async () => {
    const { url } = await ticket(await agent({ pipelineMode: 'streaming', sttProvider: 'builtin', ttsProvider: 'builtin' }));
    const { context: browserContext } = await context(false);
    const { page } = await watched(browserContext);
    await page.goto(`${app.baseUrl}${url}`);
    await page.click('#talk-button');
    await page.locator('#talk[data-state="failed"]').waitFor();
    expect(await page.locator('#talk-status').textContent()).toContain('The microphone is blocked');
    await browserContext.close();
  });

  it('as a widget on the business’s own site: a <script> and a button, allowed by the organization’s webCallOrigins only', async () => {
    const agentId = await agent({ pipelineMode: 'streaming', sttProvider: 'builtin', ttsProvider: 'builtin' });
    const embed = (token: string) =>
      `<!doctype html><html><body><h1>Acme Dental</h1><button data-gateway-talk data-echo-cancellation="off" data-token="${token}">Talk to us</button><script src="${app.baseUrl}/talk/talk.js"></script></body></html>`;
    const { context: browserContext } = await context(true, [businessOrigin]);
    expect((await acme.rest.put('/api/organization', { webCallOrigins: [businessOrigin] })).status).toBe(200);
    businessPage = embed((await ticket(agentId)).token);
    const page = await browserContext.newPage();
    await page.goto(businessOrigin);
    await page.click('button[data-gateway-talk]');
    await page.locator('.gateway-talk[data-state="live"]').waitFor();
    await shows(page, '.gateway-talk', 'li[data-role="caller"]', SENTENCE);
    await shows(page, '.gateway-talk', 'li[data-role="agent"]', SENTENCE);
    await playedMs(page, '.gateway-talk');
    await page.click('button[data-gateway-talk]');
    await page.locator('.gateway-talk[data-state="ended"]').waitFor();
    // Off the list: refused before any audio, and the page says why.
    expect((await acme.rest.put('/api/organization', { webCallOrigins: [] })).status).toBe(200);
    businessPage = embed((await ticket(agentId)).token);
    const refused = await browserContext.newPage();
    await refused.goto(businessOrigin);
    await refused.click('button[data-gateway-talk]');
    await refused.locator('.gateway-talk[data-state="failed"]').waitFor();
    expect(await refused.locator('.gateway-talk p').textContent()).toContain('may not be used on this site');
    await browserContext.close();
  });
});
