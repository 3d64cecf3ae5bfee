import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityClass } from '@mikro-orm/core';
import { pageMeta, type Page } from '../common/pagination.js';
import { isUuid } from './base.entity.js';
import { keysetMeta, keysetPlan, rowKeySql, type Keyset } from './keyset.js';
import { columnsToReadObject } from './read-model.js';
import type { CountedList } from './list-counts.js';

export interface PagesByParentQuery<T extends object> {
  entity: EntityClass<T>;
  table: string;
  /** The column naming the parent (conversation_id, knowledge_base_id). */
  parentColumn: string;
  /** The columns to read (`*` or a list that leaves a large one out). */
  columns: string;
  /** SQL order within a parent, ending with a unique column so pages never overlap. */
  orderBy: string;
  organizationId: string;
  /** Extra filters (`status = ?`) and their parameters. */
  filters?: { sql: string; params: unknown[] }[];
  page: number;
  limit: number;
  /**
   * The entity property `orderBy` sorts by first, and its direction (then id the same way): each page's
   * meta then carries the cursors of the pages beside it, which the parent's own keyset reads (keyset.ts).
   */
  keyset?: { field: string; order: 'asc' | 'desc' };
  /**
   * The list whose size list_row_counts keeps per parent (an execution's calls): read without filters,
   * each parent's page is then a bounded read on its keyset index and its total the kept sum, so a
   * parent of a million rows costs a page, not a count of its rows (list-counts.ts).
   */
  keptTotals?: CountedList;
}

/**
 * One page of children per parent in one statement, however many parents: rows ranked by
 * row_number() within each parent, each carrying its parent's total (a page past the end: two).
 */
export async function pagesByParent<T extends object>(
  em: EntityManager,
  parentIds: readonly string[],
  query: PagesByParentQuery<T>,
): Promise<Map<string, Page<T>>> {
  const { page, limit, parentColumn } = query;
  const pages = new Map(parentIds.map((id) => [id, { data: [] as T[], meta: pageMeta(page, limit, 0) }]));
  // The database answers ids in lowercase; a caller may have asked with capitals (UUIDs are case-blind).
  const pageOf = new Map([...pages].map(([id, parentPage]) => [id.toLowerCase(), parentPage]));
  const ids = [...new Set(parentIds.filter(isUuid).map((id) => id.toLowerCase()))];
  if (ids.length === 0) return pages;
  const filters = ['organization_id = ?', `${parentColumn} in (${ids.map(() => '?').join(', ')})`, ...(query.filters ?? []).map((filter) => filter.sql)];
  const params: unknown[] = [query.organizationId, ...ids, ...(query.filters ?? []).flatMap((filter) => filter.params)];
  const where = filters.join(' and ');
  const offset = (page - 1) * limit;
  const keyColumn = query.keyset ? `, ${rowKeySql(em, query.entity as EntityClass<object>, query.keyset.field)(query.table)} as __key` : '';
  // Through the EntityManager, not its raw connection, so the request's abort signal applies.
  const kept = query.keptTotals && (query.filters ?? []).length === 0 ? await keptPages(em, query, ids, keyColumn, offset) : undefined;
  const rows =
    kept?.rows ??
    (await em.execute<Record<string, unknown>[]>(
      `select * from (select ${query.columns}${keyColumn}, row_number() over (partition by ${parentColumn} order by ${query.orderBy}) as position, ` +
        `count(*) over (partition by ${parentColumn}) as parent_total from ${query.table} where ${where}) ranked ` +
        `where position > ? and position <= ? order by ${parentColumn}, position`,
      [...params, offset, offset + limit] as never[],
    ));
  const keys = new Map<Page<T>, string[]>();
  for (const row of rows) {
    const { position: _position, parent_total: total, __key: key, ...columns } = row;
    const parentPage = pageOf.get(String(row[parentColumn]).toLowerCase())!;
    parentPage.meta = pageMeta(page, limit, Number(total));
    parentPage.data.push(columnsToReadObject(em, query.entity, columns));
    if (query.keyset) keys.set(parentPage, [...(keys.get(parentPage) ?? []), String(key)]);
  }
  // Kept totals hold for a page past the end too; else such a parent's total is counted (a second statement).
  for (const id of kept ? ids : []) pageOf.get(id)!.meta = pageMeta(page, limit, kept!.totals.get(id) ?? 0);
  const unseen = kept ? [] : ids.filter((id) => pageOf.get(id)!.data.length === 0);
  if (offset > 0 && unseen.length > 0) {
    const totals = await em.execute<Record<string, unknown>[]>(
      `select ${parentColumn} as parent, count(*)::int as total from ${query.table} where ${where} group by ${parentColumn}`,
      params as never[],
    );
    for (const { parent, total } of totals) {
      if (unseen.includes(String(parent).toLowerCase())) pageOf.get(String(parent).toLowerCase())!.meta = pageMeta(page, limit, Number(total));
    }
  }
  if (query.keyset) {
    const keyset: Keyset = { field: query.keyset.field, order: query.keyset.order, sortBy: query.keyset.field, cursor: null };
    const plan = keysetPlan(em, query.entity as EntityClass<object>, keyset, limit, offset);
    for (const parentPage of pageOf.values()) {
      parentPage.meta = keysetMeta(keyset, plan, limit, parentPage.meta.total, keys.get(parentPage) ?? [], false);
    }
  }
  return pages;
}

/**
 * Each parent's page by a lateral read that stops after its page (on the parent's keyset index), and
 * each parent's total from list_row_counts: the same rows and totals as the ranked read, without
 * visiting every child. A parent with no rows has no kept total and reads as 0.
 */
async function keptPages<T extends object>(
  em: EntityManager,
  query: PagesByParentQuery<T>,
  ids: string[],
  keyColumn: string,
  offset: number,
): Promise<{ rows: Record<string, unknown>[]; totals: Map<string, number> }> {
  const { table, parentColumn, limit } = query;
  const parents = ids.map(() => '(?::uuid)').join(', ');
  // One after the other: inside a transaction both would share its one connection anyway.
  const rows = await em.execute<Record<string, unknown>[]>(
    `select page.* from (values ${parents}) parent(id) cross join lateral (select ${query.columns}${keyColumn} from ${table} ` +
      `where organization_id = ? and ${parentColumn} = parent.id order by ${query.orderBy} offset ? limit ?) page order by page.${parentColumn}, ${query.orderBy.replace(/(^|, )/g, '$1page.')}`,
    [...ids, query.organizationId, offset, limit] as never[],
  );
  const totals = await em.execute<{ parent: string; total: number }[]>(
    `select scope_id as parent, coalesce(sum(rows), 0)::int as total from list_row_counts ` +
      `where organization_id = ? and list = ? and scope_id in (${ids.map(() => '?').join(', ')}) group by scope_id`,
    [query.organizationId, query.keptTotals, ...ids] as never[],
  );
  const totalOf = new Map(totals.map(({ parent, total }) => [String(parent).toLowerCase(), Number(total)]));
  return { rows: rows.map((row) => ({ ...row, parent_total: totalOf.get(String(row[parentColumn]).toLowerCase()) ?? 0 })), totals: totalOf };
}
