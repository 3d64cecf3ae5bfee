import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Router } from 'express';
import { PROJECT_ROOT } from '../common/package-info.js';

/** Where `npm run build` (src/build-if-stale.mjs) leaves the console Vite built from console/. */
export const CONSOLE_DIR = join(PROJECT_ROOT, 'dist', 'console');

/**
 * The console's Content-Security-Policy: its own scripts and styles only (Vite writes no inline script or
 * style), the API of its own origin (`connect-src 'self'` covers the graphql-ws socket to the same host),
 * and the recording it downloads played from a blob: URL. Checked in Chromium by the console's tests.
 */
export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm install &amp;&amp; npm run build</code>, then start the gateway again.</p></main></body></html>
`;

/** index.html as Vite wrote it, read again only when the build changed it (a rebuild while the server runs). */
function indexPage(): () => string | null {
  let cached: { at: number; html: string } | null = null;
  return () => {
    const file = join(CONSOLE_DIR, 'index.html');
    if (!existsSync(file)) return null;
    const at = statSync(file).mtimeMs;
    if (!cached || cached.at !== at) cached = { at, html: readFileSync(file, 'utf8') };
    return cached.html;
  };
}

/**
 * `/console` and every path under it (the console's own routes, resolved in the browser) answer the
 * console's page; `/console/assets/…` its built files, fingerprinted by Vite, so kept a year. No
 * credentials are needed to load it: the console asks for an API key and sends it to /graphql.
 */
export function consoleRouter(): Router {
  const router = express.Router();
  const page = indexPage();
  router.use(
    '/console/assets',
    express.static(join(CONSOLE_DIR, 'assets'), { index: false, redirect: false, fallthrough: true, immutable: true, maxAge: '365d' }),
  );
  // An asset that is not there is a 404 (the gateway's problem body), never the page.
  router.use('/console/assets', (_req, _res, next) => next('router'));
  router.get(['/console', '/console/{*path}'], (_req, res) => {
    const html = page();
    res.setHeader('Content-Security-Policy', CONSOLE_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    res
      .status(html ? 200 : 503)
      .type('html')
      .send(html ?? NOT_BUILT);
  });
  return router;
}
