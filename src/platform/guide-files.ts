import { posix } from 'node:path';

// Which Markdown files are guides and where each is served: read by the router (guides.ts), the
// renderer it loads on first use (guide-markdown.ts), the link check and the README runner.

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
  'docs/tools.md',
  'docs/console.md',
  'docs/sdk.md',
  'docs/operating.md',
  'docs/security.md',
  'docs/performance.md',
  'docs/api-decisions.md',
  'CONTRIBUTING.md',
  'docs/development/testing.md',
  'docs/development/carriers.md',
  'docs/development/performance-journal.md',
  'docs/development/runner-claim.md',
] as const;

/** Where a guide is served: docs/README.md is the index, other pages by their path without docs/ and .md. */
export function guideUrl(file: string): string {
  if (file === 'docs/README.md') return '/docs/guides';
  const name = file.replace(/^docs\//, '').replace(/\.md$/, '');
  return `/docs/guides/${name.toLowerCase()}`;
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
