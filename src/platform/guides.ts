import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
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
