import type { Request, Response } from 'express';
import type { Page } from '../common/pagination.js';
import type { JsonSchema } from './json-schema.js';

/**
 * Lists whose answer the interface fixes as an array (or `{apiKeys}`) stay that shape and are
 * still bounded: `page` and `limit` pick the rows, and the list's size and neighbours travel in
 * headers: `X-Total-Count` and an RFC 8288 `Link` with `first`, `last`, and `prev`/`next` where they exist.
 */
export function setPageHeaders(req: Request, res: Response, page: Pick<Page<unknown>, 'meta'>): void {
  const { meta } = page;
  res.setHeader('X-Total-Count', String(meta.total));
  // The request's other parameters (a status filter) stay; page and limit go last.
  const { path, rest } = pathAndOtherParams(req.originalUrl);
  const link = (n: number, rel: string) => `<${path}?${rest}page=${n}&limit=${meta.limit}>; rel="${rel}"`;
  const links = [link(1, 'first'), link(Math.max(meta.totalPages, 1), 'last')];
  if (meta.hasPreviousPage) links.push(link(Math.min(meta.page - 1, Math.max(meta.totalPages, 1)), 'prev'));
  if (meta.hasNextPage) links.push(link(meta.page + 1, 'next'));
  res.setHeader('Link', links.join(', '));
}

/** A plain path: what URL would give as its pathname unchanged. */
const PLAIN_PATH = /^\/[A-Za-z0-9/_.~-]*$/;

/** The request's path and its query without page and limit (as `a=1&`, or empty), as URL and URLSearchParams write them. */
function pathAndOtherParams(originalUrl: string): { path: string; rest: string } {
  const mark = originalUrl.indexOf('?');
  const rawPath = mark < 0 ? originalUrl : originalUrl.slice(0, mark);
  const path = PLAIN_PATH.test(rawPath) && !rawPath.includes('/.') ? rawPath : new URL(rawPath, 'http://gateway.invalid').pathname;
  if (mark < 0) return { path, rest: '' };
  const params = new URLSearchParams(originalUrl.slice(mark + 1));
  params.delete('page');
  params.delete('limit');
  const rest = params.toString();
  return { path, rest: rest === '' ? '' : `${rest}&` };
}

/** OpenAPI headers of a bounded array answer. */
export const PAGE_HEADERS: Record<string, JsonSchema> = {
  'X-Total-Count': { description: 'How many rows the whole list has', schema: { type: 'integer', minimum: 0 } },
  Link: { description: 'RFC 8288 links to the first, last, prev and next pages (prev and next only where they exist)', schema: { type: 'string' } },
};
