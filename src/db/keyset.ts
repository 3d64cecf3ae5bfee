import type { EntityClass, EntityProperty, QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeCursor, encodeCursor, type Cursor } from '../common/cursor.js';
import { AppError } from '../common/errors.js';
import type { PageMeta } from '../common/pagination.js';

// Keyset pages. Every list orders by one sort field and then by id, both in the direction asked, so
// that (sort value, id) is unique and an index on (organization_id, sort column, id) serves every
// page: a cursor names the row a page starts beside, and the page is the `limit` rows after it in the
// index, as cheap at the millionth row as at the first. `page`/`limit` stay as they were (OFFSET) for
// the lists' first pages and for clients that jump; every answer carries the cursors of the pages
// beside it, so a client that walks reads each page by the index.

/** The order of a list page and, when the client sent one, its cursor (decoded and checked). */
export interface Keyset {
  field: string;
  order: 'asc' | 'desc';
  /** The request's `sortBy` as the client spelled it (what a cursor is checked against). */
  sortBy: string;
  cursor: Cursor | null;
}

/** The arguments every sorted list takes. */
export interface SortedPageArgs {
  page: number;
  limit: number;
  sortOrder: 'asc' | 'desc';
  cursor?: string | null;
}

/**
 * The read options of a page of a list sorted by `field` (from its allow-list): the order (sort field,
 * then id, in one direction), the page's limit and offset, and the keyset (with the cursor, when sent).
 */
export function sortedPage<T>(args: SortedPageArgs, field: string): { orderBy: QueryOrderMap<T>[]; limit: number; offset: number; keyset: Keyset } {
  const order = args.sortOrder === 'asc' ? 'asc' : 'desc';
  const cursor = args.cursor ? decodeCursor(args.cursor, field, order) : null;
  return {
    orderBy: [{ [field]: order } as QueryOrderMap<T>, { id: order } as QueryOrderMap<T>],
    limit: args.limit,
    offset: cursor ? 0 : (args.page - 1) * args.limit,
    keyset: { field, order, sortBy: field, cursor },
  };
}

/**
 * The read options of a page of a list with one fixed order (`field` then id, both `order`): the same
 * keyset as a sorted list's, its cursors written for that order (a cursor of another order is refused).
 */
export function fixedOrderPage<T>(
  args: { page: number; limit: number; cursor?: string | null },
  field: string,
  order: 'asc' | 'desc',
): { orderBy: QueryOrderMap<T>[]; limit: number; offset: number; keyset: Keyset } {
  return sortedPage<T>({ page: args.page, limit: args.limit, sortOrder: order, cursor: args.cursor ?? null }, field);
}

/** What a read does for a keyset: its order, the condition after (or before) the cursor's row, how many rows it fetches. */
export interface KeysetPlan {
  orderBy: QueryOrderMap<object>[];
  /** Over the row alias; null on a page without a cursor or the last page. */
  condition: { sql(alias: string): string; params: unknown[]; key: string } | null;
  /** The row's key as JSON text `[value, id]`, read beside every row to write the cursors. */
  keySql(alias: string): string;
  /** Rows to fetch: one more than the page to know whether another follows (a cursor's), or the last page's rows. */
  fetch: number;
  /** Rows fetched in the reverse order (before a cursor, the last page): put back in the list's order. */
  reversed: boolean;
  page: number;
}

interface SortColumn {
  sql(alias: string): string;
  nullable: boolean;
  date: boolean;
  /** A number column: a cursor's value must be digits (anything else would fail the statement's cast). */
  integer: boolean;
}

function sortColumn(em: EntityManager, entity: EntityClass<object>, field: string): SortColumn {
  const prop = em.getMetadata().get(entity).properties[field as never] as EntityProperty | undefined;
  if (!prop) throw new Error(`${entity.name}.${field} is not a property`);
  const date = prop.runtimeType === 'Date';
  const integer = prop.runtimeType === 'number';
  if (prop.formula) {
    const formula = prop.formula as unknown as (columns: unknown, table: unknown) => string;
    return { sql: (alias) => `(${formula({ toString: () => alias }, { alias, toString: () => alias })})`, nullable: Boolean(prop.nullable), date, integer };
  }
  const column = prop.fieldNames[0]!;
  return { sql: (alias) => `${alias}."${column}"`, nullable: Boolean(prop.nullable), date, integer };
}

/** The plan of a read of `entity` for `keyset`, `limit` rows a page (the last page's rows and number are set once its list is counted: read-model.ts). */
export function keysetPlan(em: EntityManager, entity: EntityClass<object>, keyset: Keyset, limit: number, offset: number): KeysetPlan {
  const column = sortColumn(em, entity, keyset.field);
  const keySql = keySqlOf(column);
  const cursor = keyset.cursor;
  const reversed = cursor !== null && cursor.direction !== 'after';
  const direction = reversed ? (keyset.order === 'asc' ? 'desc' : 'asc') : keyset.order;
  const orderBy = [{ [keyset.field]: direction }, { id: direction }] as QueryOrderMap<object>[];
  if (!cursor) return { orderBy, condition: null, keySql, fetch: limit, reversed: false, page: Math.floor(offset / limit) + 1 };
  if (cursor.direction === 'last') return { orderBy, condition: null, keySql, fetch: limit, reversed: true, page: cursor.page };
  const [value, id] = cursor.key!;
  if (value !== null && ((column.date && !ISO_INSTANT.test(value)) || (column.integer && !INTEGER.test(value))))
    throw AppError.badInput([{ field: 'cursor', message: 'cursor is not a cursor this list answered' }]);
  const cast = column.date ? '::timestamptz' : '';
  // Past the cursor's row in the fetched direction: PostgreSQL puts nulls last ascending, first descending.
  const greater = direction === 'asc';
  const op = greater ? '>' : '<';
  let sql: (alias: string) => string;
  let params: unknown[];
  let key: string;
  if (value === null) {
    key = `null-${op}`;
    params = [id];
    sql = greater
      ? (alias) => `(${column.sql(alias)} is null and ${alias}."id" > ?::uuid)`
      : (alias) => `((${column.sql(alias)} is null and ${alias}."id" < ?::uuid) or ${column.sql(alias)} is not null)`;
  } else {
    key = `value-${op}-${column.nullable && greater ? 'nulls' : 'plain'}`;
    params = [value, id];
    const row = (alias: string) => `(${column.sql(alias)}, ${alias}."id") ${op} (?${cast}, ?::uuid)`;
    sql = column.nullable && greater ? (alias) => `(${row(alias)} or ${column.sql(alias)} is null)` : row;
  }
  return { orderBy, condition: { sql, params, key }, keySql, fetch: limit + 1, reversed, page: cursor.page };
}

/** The row's key as JSON text `[value, id]` over the row alias, the sort value written as a cursor holds it. */
function keySqlOf(column: SortColumn): (alias: string) => string {
  const text = (alias: string) =>
    column.date ? `to_char(${column.sql(alias)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : `${column.sql(alias)}::text`;
  return (alias) => `json_build_array(${text(alias)}, ${alias}."id")::text`;
}

/** `keySqlOf` for `entity`'s property `field`: what a read that pages by offset adds to write its page's cursors. */
export function rowKeySql(em: EntityManager, entity: EntityClass<object>, field: string): (alias: string) => string {
  return keySqlOf(sortColumn(em, entity, field));
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** Within PostgreSQL's int4, which every number column sorted by is. */
const INTEGER = /^-?\d{1,9}$/;

/** The rows fetched by `plan`, in the list's order, cut to the page; and whether rows follow (after) or precede (before) them. */
export function keysetRows<R>(plan: KeysetPlan, rows: R[], limit: number): { rows: R[]; more: boolean } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: plan.reversed ? page.reverse() : page, more };
}

/**
 * The meta of a page read with `plan`: its number, the count (null when not read), whether pages follow
 * and precede it, and their cursors (from the first and last rows' keys).
 */
export function keysetMeta(keyset: Keyset, plan: KeysetPlan, limit: number, total: number | null, keys: string[], more: boolean): PageMeta {
  const cursor = keyset.cursor;
  const page = plan.page;
  const countedPages = total === null ? null : Math.ceil(total / limit);
  let hasNext: boolean | null;
  let hasPrevious: boolean;
  if (!cursor) {
    hasNext = countedPages === null ? null : page < countedPages;
    hasPrevious = page > 1;
  } else if (cursor.direction === 'after') {
    hasNext = more;
    hasPrevious = true;
  } else if (cursor.direction === 'before') {
    hasNext = true;
    hasPrevious = more;
  } else {
    hasNext = false;
    hasPrevious = page > 1;
  }
  const write = (direction: 'after' | 'before', key: string | undefined, to: number) =>
    key === undefined
      ? null
      : encodeCursor({ direction, sortBy: keyset.sortBy, sortOrder: keyset.order, key: JSON.parse(key) as [string | null, string], page: to });
  const lastPage = countedPages === null ? null : Math.max(countedPages, 1);
  const meta: Record<string, unknown> = {
    page,
    limit,
    hasPreviousPage: hasPrevious,
    nextCursor: hasNext === false ? null : write('after', keys.at(-1), page + 1),
    prevCursor: hasPrevious && page > 1 ? write('before', keys[0], page - 1) : null,
    lastCursor: encodeCursor({ direction: 'last', sortBy: keyset.sortBy, sortOrder: keyset.order, key: null, page: lastPage ?? 1 }),
  };
  if (total !== null) Object.assign(meta, { total, totalPages: countedPages, hasNextPage: hasNext });
  else if (hasNext !== null) meta.hasNextPage = hasNext;
  return meta as unknown as PageMeta;
}
