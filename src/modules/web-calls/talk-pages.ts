import express, { type Router } from 'express';
import { TALK_CLIENT_JS } from './talk-client.js';
import { TALK_WORKLET_JS } from './talk-worklet.js';

/** The /talk page's Content-Security-Policy: the pages' own (no inline script, nothing from another origin), its socket on the same host. */
export const TALK_PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TALK_CSS = `body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1d2433; }
button { font: inherit; padding: .6rem 1.2rem; border-radius: 2rem; border: 0; background: #2454d6; color: #fff; cursor: pointer; }
button:disabled { opacity: .6; }
#talk[data-state="failed"] #talk-status { color: #a32020; font-weight: 600; }
#talk-transcript { padding-left: 1.2rem; }
#talk-transcript li[data-role="agent"] { color: #2454d6; }
`;

const TALK_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Talk to the agent</title>
<link rel="stylesheet" href="/talk/talk.css">
</head>
<body>
<main id="talk" data-state="idle">
<h1>Talk to the agent</h1>
<p id="talk-status" role="status" aria-live="polite">Loading…</p>
<button id="talk-button" type="button">Start talking</button>
<ol id="talk-transcript" aria-live="polite"></ol>
</main>
<script src="/talk/talk.js"></script>
</body>
</html>
`;

/**
 * `/talk` (the page a web call's URL opens), `/talk/talk.js` (its script, which is also the widget a
 * business's own site loads) and `/talk/worklet.js` (the audio worklet). Both scripts may be loaded
 * from any origin (the widget's page, its worklet): they hold no secret; the socket checks the origin.
 */
export function talkRouter(): Router {
  const router = express.Router();
  router.get('/talk', (_req, res) => {
    res.setHeader('Content-Security-Policy', TALK_PAGE_POLICY);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(TALK_HTML);
  });
  router.get('/talk/talk.css', (_req, res) => res.type('text/css').send(TALK_CSS));
  for (const [path, source] of [
    ['/talk/talk.js', TALK_CLIENT_JS],
    ['/talk/worklet.js', TALK_WORKLET_JS],
  ] as const) {
    router.get(path, (_req, res) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      res.type('text/javascript').send(source);
    });
  }
  return router;
}
