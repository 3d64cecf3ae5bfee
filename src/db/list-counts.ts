import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from './sql.js';

/** The lists whose size list_row_counts keeps (Migration20270101100000), and whose owner each is scoped by. */
export type CountedList = 'credit_ledger' | 'events' | 'calls' | 'calls.execution';

/**
 * A ListRead `count` for the whole of a counted list: the sum of its owner's list_row_counts rows, which
 * triggers append in the transaction of every insert and delete, so the sum is exact in any snapshot.
 * Only for a list read without filters: a filter's matches are counted on its index.
 */
export function listCount(list: CountedList, organizationId: string, scopeId = organizationId): { key: string; sql: string; params: unknown[] } {
  return {
    key: `list-count|${list}`,
    sql: `select coalesce(sum(n.rows), 0)::int from list_row_counts n where n.scope_id = ? and n.organization_id = ? and n.list = '${list}'`,
    params: [scopeId, organizationId],
  };
}

/**
 * Folds each owner's list_row_counts rows into one (the campaign runner, every tick), so that reading a
 * list's size sums a few rows whatever the writes since. The fold deletes and re-inserts in one
 * statement: a snapshot sees the rows before or the sum after, the same number.
 */
export async function compactListCounts(em: EntityManager): Promise<number> {
  const folded = await query<{ n: number }>(
    em,
    `with owners as (select scope_id, list from list_row_counts group by scope_id, list having count(*) > 1 limit 1000),
       gone as (delete from list_row_counts c using owners o where c.scope_id = o.scope_id and c.list = o.list
                returning c.organization_id, c.list, c.scope_id, c.rows),
       kept as (insert into list_row_counts (organization_id, list, scope_id, rows)
                select organization_id, list, scope_id, sum(rows) from gone group by organization_id, list, scope_id having sum(rows) <> 0 returning 1)
     select count(*)::int as n from gone`,
  );
  return Number(folded[0]?.n ?? 0);
}
