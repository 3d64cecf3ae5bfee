import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityClass } from '@mikro-orm/core';
import { pageMeta, type Page } from '../common/pagination.js';
import { isUuid } from './base.entity.js';
import { keysetMeta, keysetPlan, rowKeySql, type Keyset } from './keyset.js';
import { columnsToReadObject } from './read-model.js';

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
  const rows = await em.execute<Record<string, unknown>[]>(
    `select * from (select ${query.columns}${keyColumn}, row_number() over (partition by ${parentColumn} order by ${query.orderBy}) as position, ` +
      `count(*) over (partition by ${parentColumn}) as parent_total from ${query.table} where ${where}) ranked ` +
      `where position > ? and position <= ? order by ${parentColumn}, position`,
    [...params, offset, offset + limit] as never[],
  );
  const keys = new Map<Page<T>, string[]>();
  for (const row of rows) {
    const { position: _position, parent_total: total, __key: key, ...columns } = row;
    const parentPage = pageOf.get(String(row[parentColumn]).toLowerCase())!;
    parentPage.meta = pageMeta(page, limit, Number(total));
    parentPage.data.push(columnsToReadObject(em, query.entity, columns));
    if (query.keyset) keys.set(parentPage, [...(keys.get(parentPage) ?? []), String(key)]);
  }
  const unseen = ids.filter((id) => pageOf.get(id)!.data.length === 0);
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
