// The guides' Markdown read with markdown-it: the anchors GitHub gives their headings, their links,
// and a guide's HTML. Loaded on first use (the served guides' first page, the link check, the README
// runner), not at the server's start: markdown-it and its dependencies are a few megabytes a request
// to the doors never needs.
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';
import { isRelativeLink, servedHref } from './guide-files.js';

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
