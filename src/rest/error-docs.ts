import type { RequestHandler } from 'express';
import { ERROR_HELP, ERROR_STATUS, ERROR_TITLE, errorAnchor, type ErrorCode } from '../common/errors.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const withCode = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

/** The page every problem's `type` points at (`/docs/errors#not-found`), built from the error table. */
export function errorDocsPage(): string {
  const rows = (Object.keys(ERROR_STATUS) as ErrorCode[])
    .map(
      (code) =>
        `<section id="${errorAnchor(code)}"><h2><code>${code}</code> — ${ERROR_STATUS[code]} ${escapeHtml(ERROR_TITLE[code])}</h2><p>${withCode(ERROR_HELP[code])}</p></section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Errors — telephony agent gateway</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}h2{font-size:1.1rem;margin-top:1.5rem}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><h1>Errors</h1>
<p>REST answers errors as RFC 9457 problem details (<code>application/problem+json</code>) with <code>code</code>, <code>detail</code> and a <code>requestId</code>; GraphQL errors carry the same code in <code>extensions.code</code>.</p>
${rows}
</body></html>
`;
}

export function errorDocs(): RequestHandler {
  const page = errorDocsPage();
  return (_req, res) => {
    res.type('html').send(page);
  };
}
