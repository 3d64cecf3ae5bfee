import type { Request, Response } from 'express';
import type { Page } from '../common/pagination.js';
import type { JsonSchema } from './json-schema.js';

/**
 * Lists whose answer the interface fixes as an array (or `{apiKeys}`) stay that shape and are
 * still bounded: `page` and `limit` pick the rows, and the list's size and neighbours travel in
 * headers: `X-Total-Count` and an RFC 8288 `Link` with `first`, `last`, and `prev`/`next` where they exist.
 * A page read by its keyset also names the cursor of the page after it in `X-Next-Cursor`; a request
 * that walks by `cursor` gets `next`, `prev` and `last` as cursor links (`first` stays page 1).
 */
export function setPageHeaders(req: Request, res: Response, page: Pick<Page<unknown>, 'meta'>): void {
  const { meta } = page;
  res.setHeader('X-Total-Count', String(meta.total));
  if (meta.nextCursor) res.setHeader('X-Next-Cursor', meta.nextCursor);
  // The request's other parameters (a status filter) stay; page and limit (or cursor) go last.
  const { path, rest, walking } = pathAndOtherParams(req.originalUrl);
  const link = (n: number, rel: string) => `<${path}?${rest}page=${n}&limit=${meta.limit}>; rel="${rel}"`;
  const cursorLink = (cursor: string, rel: string) => `<${path}?${rest}cursor=${encodeURIComponent(cursor)}&limit=${meta.limit}>; rel="${rel}"`;
  const lastPage = Math.max(meta.totalPages, 1);
  const links = [link(1, 'first'), walking && meta.lastCursor ? cursorLink(meta.lastCursor, 'last') : link(lastPage, 'last')];
  if (walking && meta.prevCursor) links.push(cursorLink(meta.prevCursor, 'prev'));
  else if (meta.hasPreviousPage) links.push(link(Math.min(meta.page - 1, lastPage), 'prev'));
  if (walking && meta.nextCursor) links.push(cursorLink(meta.nextCursor, 'next'));
  else if (meta.hasNextPage && !walking) links.push(link(meta.page + 1, 'next'));
  res.setHeader('Link', links.join(', '));
}

/** A plain path: what URL would give as its pathname unchanged. */
const PLAIN_PATH = /^\/[A-Za-z0-9/_.~-]*$/;

/** The request's path, its query without page, limit and cursor (as `a=1&`, or empty), as URL and URLSearchParams write them, and whether it sent a cursor. */
function pathAndOtherParams(originalUrl: string): { path: string; rest: string; walking: boolean } {
  const mark = originalUrl.indexOf('?');
  const rawPath = mark < 0 ? originalUrl : originalUrl.slice(0, mark);
  const path = PLAIN_PATH.test(rawPath) && !rawPath.includes('/.') ? rawPath : new URL(rawPath, 'http://gateway.invalid').pathname;
  if (mark < 0) return { path, rest: '', walking: false };
  const params = new URLSearchParams(originalUrl.slice(mark + 1));
  const walking = Boolean(params.get('cursor'));
  params.delete('page');
  params.delete('limit');
  params.delete('cursor');
  const rest = params.toString();
  return { path, rest: rest === '' ? '' : `${rest}&`, walking };
}

/** OpenAPI headers of a bounded array answer. */
export const PAGE_HEADERS: Record<string, JsonSchema> = {
  'X-Total-Count': { description: 'How many rows the whole list has', schema: { type: 'integer', minimum: 0 } },
  Link: {
    description: 'RFC 8288 links to the first, last, prev and next pages (prev and next only where they exist); by cursor when the request walked by cursor',
    schema: { type: 'string' },
  },
  'X-Next-Cursor': { description: 'The cursor of the page after this one (absent on the last page): pass it as cursor', schema: { type: 'string' } },
};
