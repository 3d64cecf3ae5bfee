/**
 * A REST page's meta as the lists answer it: the six counted fields, and the cursors beside them (the
 * next page's while there is one, the previous page's after the first, the last page's always).
 */
export function withCursors<M extends { hasNextPage?: boolean; hasPreviousPage?: boolean }>(
  meta: M,
): M & Record<'nextCursor' | 'prevCursor' | 'lastCursor', unknown> {
  return {
    ...meta,
    nextCursor: meta.hasNextPage ? expect.any(String) : null,
    prevCursor: meta.hasPreviousPage ? expect.any(String) : null,
    lastCursor: expect.any(String),
  };
}

/** The meta of a page with no cursors (a relation read in its parents' statement). */
export function withoutCursors<M extends object>(meta: M): M & Record<'nextCursor' | 'prevCursor' | 'lastCursor', null> {
  return { ...meta, nextCursor: null, prevCursor: null, lastCursor: null };
}

/** A page's meta without its cursors: what a relation's page inside another page (which has none) answers beside a list's own. */
export function countedOnly(meta: Record<string, unknown>): Record<string, unknown> {
  const { nextCursor: _next, prevCursor: _prev, lastCursor: _last, ...counted } = meta;
  return counted;
}
