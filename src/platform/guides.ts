import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Router } from 'express';
import { PROJECT_ROOT } from '../common/package-info.js';
import { GUIDE_FILES, guideUrl } from './guide-files.js';

/** A guide's text, read from the project (the Docker image copies README.md, CONTRIBUTING.md and docs/). */
export function readGuide(file: string): string {
  return readFileSync(join(PROJECT_ROOT, file), 'utf8');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const GUIDE_CSS = `body { font: 16px/1.55 system-ui, sans-serif; color: #1d2433; margin: 0; }
header { background: #f2f4f8; border-bottom: 1px solid #d8dde6; padding: .6rem 1rem; }
header a { margin-right: 1rem; }
main { max-width: 56rem; margin: 1.5rem auto 4rem; padding: 0 1rem; }
nav.guides { max-width: 56rem; margin: 1rem auto 0; padding: 0 1rem; font-size: .9rem; }
nav.guides a { margin-right: .8rem; white-space: nowrap; }
code { background: #f2f4f8; padding: 0 .25rem; border-radius: 3px; font-size: .92em; }
pre { background: #f2f4f8; padding: .8rem; overflow-x: auto; border-radius: 4px; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; }
th, td { border: 1px solid #d8dde6; padding: .3rem .5rem; vertical-align: top; }
a[title] { color: inherit; }
.align-right { text-align: right; }
.align-center { text-align: center; }
`;

// No script at all, and nothing from another origin: the pages are the Markdown's own text.
const GUIDE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Every guide rendered into its page, keyed by URL; a guide whose file is absent is left out (404).
 * markdown-it and the slugger load here, on the first ask for a guide: most processes serve none.
 */
async function buildPages(): Promise<Map<string, string>> {
  const { renderGuide } = await import('./guide-markdown.js');
  const rendered = GUIDE_FILES.flatMap((file) => {
    try {
      return [{ file, ...renderGuide(file, readGuide(file)) }];
    } catch {
      return [];
    }
  });
  const nav = rendered.map(({ file, title }) => `<a href="${guideUrl(file)}">${escapeHtml(title)}</a>`).join('\n');
  return new Map(
    rendered.map(({ file, title, html }) => [
      guideUrl(file),
      `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Telephony agent gateway</title>
<link rel="stylesheet" href="/docs/guides/assets/guides.css">
</head>
<body>
<header><a href="/">Telephony agent gateway</a><a href="/docs/guides">Guides</a><a href="/docs">REST reference</a><a href="/graphiql">GraphiQL</a><a href="/docs/errors">Error codes</a></header>
<nav class="guides" aria-label="Guides">
${nav}
</nav>
<main>
${html}</main>
</body>
</html>
`,
    ]),
  );
}

/**
 * `/docs/guides` (the index, docs/README.md) and `/docs/guides/<page>`: the guides rendered from
 * the same Markdown as the repository's, with no credentials, nothing from a CDN and no script.
 * They are rendered on the first ask and kept.
 */
export function guidesRouter(): Router {
  const router = express.Router();
  let pages: Promise<Map<string, string>> | undefined;
  router.get('/docs/guides/assets/guides.css', (_req, res) => {
    res.type('text/css').send(GUIDE_CSS);
  });
  router.get(['/docs/guides', '/docs/guides/{*page}'], async (req, res, next) => {
    pages ??= buildPages();
    const page = (await pages).get(req.path.replace(/\/+$/, '') || '/docs/guides');
    if (!page) return next();
    res.setHeader('Content-Security-Policy', GUIDE_CSP);
    res.type('html').send(page);
  });
  return router;
}
