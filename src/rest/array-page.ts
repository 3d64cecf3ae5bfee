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
  const url = new URL(req.originalUrl, 'http://gateway.invalid');
  const link = (n: number, rel: string) => {
    // The request's other parameters (a status filter) stay; page and limit go last.
    url.searchParams.delete('page');
    url.searchParams.delete('limit');
    url.searchParams.append('page', String(n));
    url.searchParams.append('limit', String(meta.limit));
    return `<${url.pathname}${url.search}>; rel="${rel}"`;
  };
  const links = [link(1, 'first'), link(Math.max(meta.totalPages, 1), 'last')];
  if (meta.hasPreviousPage) links.push(link(Math.min(meta.page - 1, Math.max(meta.totalPages, 1)), 'prev'));
  if (meta.hasNextPage) links.push(link(meta.page + 1, 'next'));
  res.setHeader('Link', links.join(', '));
}

/** OpenAPI headers of a bounded array answer. */
export const PAGE_HEADERS: Record<string, JsonSchema> = {
  'X-Total-Count': { description: 'How many rows the whole list has', schema: { type: 'integer', minimum: 0 } },
  Link: { description: 'RFC 8288 links to the first, last, prev and next pages (prev and next only where they exist)', schema: { type: 'string' } },
};
