import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery, type QueryResult } from 'kysely';

/** Raw SQL through the fork's transaction (when it is in one); `?` placeholders, rows as plain objects. */
export function query<T = Record<string, unknown>>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return em.execute<T[]>(sql, params as never[]);
}

/** `?, ?, ?` for a list of values (callers never pass an empty list). */
export function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}

/** Timestamps travel as ISO strings cast in SQL, so both drivers read the same instant. */
export function at(date: Date): string {
  return date.toISOString();
}

interface QueryContext {
  executeQuery<R>(compiled: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/**
 * query() in the fork's transaction, its values sent as bound parameters (`$1`…) beside the SQL, not
 * written into it: for a statement carrying a large value (an import chunk's rows as JSON, ~90 KB),
 * which the ORM formats by scanning and escaping it a character at a time and PostgreSQL then lexes as
 * a literal. Every `?` is a placeholder (the SQL has no other `?`); a value whose type its place does
 * not tell needs a cast (`?::uuid`). Outside a transaction it is query().
 */
export async function queryBound<T = Record<string, unknown>>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  const context = em.getTransactionContext() as QueryContext | undefined;
  if (!context) return query<T>(em, sql, params);
  let next = 0;
  const result = await context.executeQuery(
    CompiledQuery.raw(
      sql.replace(/\?/g, () => `$${++next}`),
      params,
    ) as CompiledQuery<T>,
  );
  return result.rows;
}
