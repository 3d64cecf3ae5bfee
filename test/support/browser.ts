import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (no browser download is possible here); CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** In CI the browser must be there (.ci/run installs it); on a laptop without it the browser tests are skipped. */
export const browserAvailable = existsSync(CHROMIUM_PATH) || process.env.CI === 'true';

/**
 * How long a browser test waits for what a page shows: the page's own event ends the wait, so this is
 * only a bound, set for a busy machine (swagger-ui took over 20 s to render at a load of 15 on 2 cores).
 * The tests that wait for it take BROWSER_TEST_MS.
 */
export const BROWSER_WAIT_MS = 50_000;
export const BROWSER_TEST_MS = 120_000;

/** `args`: more switches (the web-call tests' fake microphone). */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Root in a container needs --no-sandbox; the rest keeps Chromium off the (closed) network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}

/**
 * A browser context whose network ends at `origin`: every other request is aborted and
 * recorded, so a test proves a page needs nothing from the internet.
 */
export async function offlineContext(browser: Browser, origin: string): Promise<{ context: BrowserContext; blocked: string[] }> {
  const context = await browser.newContext();
  context.setDefaultTimeout(BROWSER_WAIT_MS);
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
    blocked.push(url);
    return route.abort('internetdisconnected');
  });
  return { context, blocked };
}
