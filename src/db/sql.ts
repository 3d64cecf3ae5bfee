import type { EntityManager } from '@mikro-orm/postgresql';

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
