import { AppError } from './errors.js';

// A page cursor: where a page starts in its list's order, so that the next one is read from there by
// the order's index (keyset) instead of counting past every row before it (OFFSET). It is opaque to
// clients (base64url of JSON) but not secret: whatever it holds is only ever a bound parameter, and the
// organization scope and filters of the list still apply.

/** `after`: the rows after `key`; `before`: the rows before it; `last`: the list's last page. */
export type CursorDirection = 'after' | 'before' | 'last';

export interface Cursor {
  direction: CursorDirection;
  /** The sort field and order the cursor was made for; another order is refused. */
  sortBy: string;
  sortOrder: 'asc' | 'desc';
  /** The sort column's value (as text; null for a null) and the id of the row the page starts beside. */
  key: [string | null, string] | null;
  /** The number of the page it leads to, counted from the first (what `meta.page` answers). */
  page: number;
}

/** Longer than any cursor the gateway writes (a 255-character name and an id). */
export const MAX_CURSOR_LENGTH = 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(cursor: Cursor): string {
  const { direction, sortBy, sortOrder, key, page } = cursor;
  return Buffer.from(JSON.stringify([1, direction[0], sortBy, sortOrder, key, page])).toString('base64url');
}

function refused(message: string): AppError {
  return AppError.badInput([{ field: 'cursor', message }]);
}

/**
 * The cursor a client sent, checked against the order it is used with (`sortBy` and `sortOrder` of the
 * request); a cursor that is not one the gateway wrote, or was made for another order, is a 400 naming
 * `cursor`.
 */
export function decodeCursor(text: string, sortBy: string, sortOrder: 'asc' | 'desc'): Cursor {
  let parsed: unknown;
  try {
    if (text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('not base64url');
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refused('cursor is not a cursor this list answered (use meta.nextCursor, prevCursor or lastCursor as given)');
  }
  const shape = Array.isArray(parsed) && parsed.length === 6 && parsed[0] === 1 ? parsed : null;
  const direction: CursorDirection | null | undefined = shape && ({ a: 'after', b: 'before', l: 'last' } as const)[shape[1] as 'a' | 'b' | 'l'];
  const key = shape?.[4] as unknown;
  const page = shape?.[5] as unknown;
  const keyOk =
    direction === 'last'
      ? key === null
      : Array.isArray(key) &&
        key.length === 2 &&
        (key[0] === null || (typeof key[0] === 'string' && key[0].length <= 512)) &&
        typeof key[1] === 'string' &&
        UUID.test(key[1]);
  if (
    !shape ||
    !direction ||
    typeof shape[2] !== 'string' ||
    (shape[3] !== 'asc' && shape[3] !== 'desc') ||
    !keyOk ||
    !Number.isSafeInteger(page) ||
    (page as number) < 1
  ) {
    throw refused('cursor is not a cursor this list answered (use meta.nextCursor, prevCursor or lastCursor as given)');
  }
  if (shape[2] !== sortBy || shape[3] !== sortOrder) {
    throw refused(`cursor was made for sortBy=${shape[2]} sortOrder=${shape[3]}; ask with that order, or start again without a cursor`);
  }
  return { direction, sortBy, sortOrder, key: key as Cursor['key'], page: page as number };
}
