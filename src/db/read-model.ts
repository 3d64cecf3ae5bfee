import { raw, ReferenceKind, type EntityClass, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';

export interface ReadOptions<T> {
  orderBy?: QueryOrderMap<T>[];
  limit?: number;
  offset?: number;
}

// Read-only answers (a list page, a batch of a nested relation) are built from rows mapped onto
// instances of the entity class that the unit of work does not manage: the same fields and getters
// the GraphQL types and the REST presenter read, a to-one relation as `{ id }`, and no hydration
// into the identity map. Hydrating managed entities was most of a list request's CPU. These objects
// are answers only: never change and flush them (load with `em.find` for that).

/** Rows of `entity` matching `where`, as unmanaged read objects. */
export async function readRows<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  options: ReadOptions<T> = {},
): Promise<T[]> {
  const qb = em.createQueryBuilder(entity).select('*').where(where);
  applyOptions(qb, options);
  const rows = (await qb.execute('all', true)) as Record<string, unknown>[];
  return rows.map((row) => toReadObject(em, entity, row));
}

/**
 * A page of rows and the number of rows matching `where`, in one statement (`count(*) over ()`);
 * a page past the end has no row to carry the count, and costs a second statement.
 */
export async function readPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  options: ReadOptions<T> & { limit: number; offset: number },
): Promise<{ rows: T[]; total: number }> {
  const qb = em.createQueryBuilder(entity).select(['*', raw('count(*) over () as "__total"')]).where(where);
  applyOptions(qb, options);
  const rows = (await qb.execute('all', true)) as Record<string, unknown>[];
  const total = rows.length > 0 ? Number(rows[0]!.__total) : options.offset === 0 ? 0 : await em.count(entity, where as never);
  return {
    rows: rows.map((row) => {
      delete row.__total;
      return toReadObject(em, entity, row);
    }),
    total,
  };
}

/** A row already mapped to property names (`em.getDriver().mapResult` or QueryBuilder results) as a read object. */
export function toReadObject<T extends object>(em: EntityManager, entity: EntityClass<T>, row: Record<string, unknown>): T {
  for (const name of toOneProperties(em, entity)) {
    const id = row[name];
    if (id !== null && id !== undefined && typeof id !== 'object') row[name] = { id };
  }
  // The row's own data properties stay as they are: assigning them onto the prototype would run the
  // accessors MikroORM defines there for managed entities.
  return Object.setPrototypeOf(row, entity.prototype) as T;
}

/** Raw database columns (snake_case) of `entity` as a read object. */
export function columnsToReadObject<T extends object>(em: EntityManager, entity: EntityClass<T>, columns: Record<string, unknown>): T {
  const mapped = em.getDriver().mapResult(columns as never, em.getMetadata().get(entity)) as Record<string, unknown>;
  return toReadObject(em, entity, mapped);
}

const TO_ONE = new WeakMap<object, string[]>();

function toOneProperties(em: EntityManager, entity: EntityClass<object>): string[] {
  let names = TO_ONE.get(entity);
  if (!names) {
    names = em
      .getMetadata()
      .get(entity)
      .props.filter((prop) => prop.kind === ReferenceKind.MANY_TO_ONE || prop.kind === ReferenceKind.ONE_TO_ONE)
      .map((prop) => prop.name);
    TO_ONE.set(entity, names);
  }
  return names;
}

function applyOptions<T extends object>(
  qb: { orderBy(order: QueryOrderMap<T>[]): unknown; limit(n: number): unknown; offset(n: number): unknown },
  options: ReadOptions<T>,
): void {
  if (options.orderBy) qb.orderBy(options.orderBy);
  if (options.limit !== undefined) qb.limit(options.limit);
  if (options.offset !== undefined) qb.offset(options.offset);
}
