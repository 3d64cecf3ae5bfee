import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import express, { type Router } from 'express';
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';
import { PROJECT_ROOT } from '../common/package-info.js';

/**
 * The Markdown guides, in the order the README runner runs their shell blocks: a block may use a
 * variable an earlier page set (`KEY`, `json`, the first campaign's audience), so a page comes after
 * the pages it continues. The link check holds this list to the files: every guide exists, and every
 * Markdown file of docs/ is here, so each one is both served and run.
 */
export const GUIDE_FILES = [
  'README.md',
  'docs/README.md',
  'docs/getting-started.md',
  'docs/agents-and-knowledge.md',
  'docs/campaigns.md',
  'docs/calls-and-carriers.md',
  'docs/voice.md',
  'docs/events.md',
  'docs/sdk.md',
  'docs/operating.md',
  'docs/security.md',
  'docs/performance.md',
  'docs/api-decisions.md',
  'CONTRIBUTING.md',
  'docs/development/testing.md',
  'docs/development/carriers.md',
] as const;

/** Where a guide is served: docs/README.md is the index, other pages by their path without docs/ and .md. */
export function guideUrl(file: string): string {
  if (file === 'docs/README.md') return '/docs/guides';
  const name = file.replace(/^docs\//, '').replace(/\.md$/, '');
  return `/docs/guides/${name.toLowerCase()}`;
}

// html: false (markdown-it's default) renders any HTML in a page as text, since the guides are
// served from the gateway's own origin; links go through markdown-it's validateLink, which refuses
// javascript:, vbscript:, file: and data: URLs.
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** A heading's text as GitHub slugs it: the text and code of its inline content, without markup. */
function headingText(inline: Token | undefined): string {
  return (inline?.children ?? [])
    .filter((child) => child.type === 'text' || child.type === 'code_inline')
    .map((child) => child.content)
    .join('');
}

/** Every heading's anchor, as GitHub makes them (lower case, punctuation dropped, `-1`, `-2` for repeats). */
export function headingAnchors(source: string): string[] {
  const slugger = new GithubSlugger();
  const tokens = markdown.parse(source, {});
  return tokens.flatMap((token, index) => (token.type === 'heading_open' ? [slugger.slug(headingText(tokens[index + 1]))] : []));
}

/** The links of a page (not those inside code), as written. */
export function guideLinks(source: string): { href: string; line: number }[] {
  const links: { href: string; line: number }[] = [];
  for (const token of markdown.parse(source, {})) {
    for (const child of token.children ?? []) {
      const href = child.type === 'link_open' ? child.attrGet('href') : child.type === 'image' ? child.attrGet('src') : null;
      if (href !== null) links.push({ href: String(href), line: (token.map?.[0] ?? 0) + 1 });
    }
  }
  return links;
}

/** Whether an address is relative to the repository (no scheme, not protocol-relative). */
export function isRelativeLink(href: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('//');
}

/**
 * A relative link of `file` as the served pages need it: a link to another guide becomes its URL
 * (with its anchor); a link to any other file of the repository, which the gateway does not serve,
 * becomes null (shown as its text).
 */
export function servedHref(file: string, href: string): string | null {
  if (!isRelativeLink(href) || href.startsWith('#')) return href;
  const [path = '', anchor] = href.split('#', 2);
  const target = posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(path)));
  if (!(GUIDE_FILES as readonly string[]).includes(target)) return null;
  return guideUrl(target) + (anchor === undefined ? '' : `#${anchor}`);
}

/** A guide's HTML body: headings carry GitHub's anchors as ids, links between guides point to their pages. */
export function renderGuide(file: string, source: string): { title: string; html: string } {
  const tokens = markdown.parse(source, {});
  const slugger = new GithubSlugger();
  let title = file;
  tokens.forEach((token, index) => {
    // A table column's alignment as a class: the pages' policy allows no inline style.
    const align = /^text-align:(left|right|center)$/.exec(String(token.attrGet('style') ?? ''));
    if (align) {
      token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
      token.attrSet('class', `align-${align[1]}`);
    }
    if (token.type === 'heading_open') {
      const text = headingText(tokens[index + 1]);
      token.attrSet('id', slugger.slug(text));
      if (token.tag === 'h1' && title === file) title = text;
    }
    for (const child of token.children ?? []) {
      if (child.type !== 'link_open') continue;
      const href = servedHref(file, String(child.attrGet('href') ?? ''));
      if (href === null) {
        // The closing token stays a closing `a` in the renderer; an `a` without href is plain text.
        child.attrs = (child.attrs ?? []).filter(([name]) => name !== 'href');
        child.attrSet('title', 'a file of the repository, not served here');
      } else {
        child.attrSet('href', href);
        if (!isRelativeLink(href)) child.attrSet('rel', 'noopener noreferrer');
      }
    }
  });
  return { title, html: markdown.renderer.render(tokens, markdown.options, {}) };
}

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

/** Every guide rendered into its page, keyed by URL; a guide whose file is absent is left out (404). */
function buildPages(): Map<string, string> {
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
  let pages: Map<string, string> | undefined;
  router.get('/docs/guides/assets/guides.css', (_req, res) => {
    res.type('text/css').send(GUIDE_CSS);
  });
  router.get(['/docs/guides', '/docs/guides/{*page}'], (req, res, next) => {
    pages ??= buildPages();
    const page = pages.get(req.path.replace(/\/+$/, '') || '/docs/guides');
    if (!page) return next();
    res.setHeader('Content-Security-Policy', GUIDE_CSP);
    res.type('html').send(page);
  });
  return router;
}
