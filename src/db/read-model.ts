import { raw, ReferenceKind, type EntityClass, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';

export interface ReadOptions<T> {
  orderBy?: QueryOrderMap<T>[];
  limit?: number;
  offset?: number;
  /** Correlated subqueries read with each row (a relation's rows as JSON), by name; see `nestedJson`. */
  nested?: NestedSelect[];
  /**
   * Only the properties these fields read (see selectedProperties; `ignore`: fields answered by a batch
   * of their own, which needs only the id); every column when a field is not known to need only some.
   */
  fields?: { names: Iterable<string>; ignore: ReadonlySet<string> } | null;
}

/** A value computed per parent row in the parent's own statement: `sql(alias)` sees the parent's table as `alias`. */
export interface NestedSelect {
  name: string;
  sql(alias: string): string;
  params: unknown[];
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
): Promise<{ rows: T[]; total: number; nested: Record<string, unknown>[] }> {
  const qb = em.createQueryBuilder(entity);
  const nested = options.nested ?? [];
  const selected = options.fields ? selectedProperties(em, entity, options.fields.names, {}, options.fields.ignore) : null;
  // A GraphQL page that asks for a few columns reads only those: no parsing of JSON columns, texts and dates nobody shows.
  const columns = (selected && !selected.all ? selected.props.map((prop) => prop.name) : ['*']) as never[];
  qb.select([...columns, raw('count(*) over () as "__total"'), ...nested.map((each, index) => raw(`(${each.sql(qb.alias)}) as "__nested_${index}"`, each.params))]).where(where);
  applyOptions(qb, options);
  const rows = (await qb.execute('all', true)) as Record<string, unknown>[];
  const total = rows.length > 0 ? Number(rows[0]!.__total) : options.offset === 0 ? 0 : await em.count(entity, where as never);
  const values = rows.map((row) => {
    const byName: Record<string, unknown> = {};
    nested.forEach((each, index) => {
      byName[each.name] = row[`__nested_${index}`];
      delete row[`__nested_${index}`];
    });
    return byName;
  });
  return {
    rows: rows.map((row) => {
      delete row.__total;
      return toReadObject(em, entity, row);
    }),
    total,
    nested: values,
  };
}

// Relations read with their parents. When a GraphQL selection asks for a relation of every row of a
// page (programs → executions, agents → conversations), the service reads it in the page's own
// statement as a correlated subquery per parent (LIMIT per parent, on the relation's index) that
// answers JSON, holding only the columns the selection needs. The relation's field resolver then
// answers from the parent (`preloaded`) instead of a batch of its own: one statement, and no
// per-column parsing of rows nobody reads. Anything the look-ahead does not cover still goes
// through the per-request DataLoaders.

const PRELOADED = new WeakMap<object, Map<string, unknown>>();

/** Keeps `value` as the answer of `key` (relation name and arguments) for the read object `parent`. */
export function preload(parent: object, key: string, value: unknown): void {
  let values = PRELOADED.get(parent);
  if (!values) PRELOADED.set(parent, (values = new Map()));
  values.set(key, value);
}

/** What `preload` kept for `parent` under `key`, or undefined. */
export function preloaded<V>(parent: object, key: string): V | undefined {
  return PRELOADED.get(parent)?.get(key) as V | undefined;
}

interface StoredProperty {
  name: string;
  column: string;
  date: boolean;
  /** Lazy (a document's text, a secret) or hidden: read only when a field names it. */
  onRequest: boolean;
}

const STORED = new WeakMap<object, StoredProperty[]>();

/** The properties of `entity` held in one column of its table (not formulas, not collections). */
function storedProperties(em: EntityManager, entity: EntityClass<object>): StoredProperty[] {
  let stored = STORED.get(entity);
  if (!stored) {
    stored = em
      .getMetadata()
      .get(entity)
      .props.filter(
        (prop) =>
          prop.fieldNames?.length === 1 &&
          !prop.formula &&
          prop.persist !== false &&
          (prop.kind === ReferenceKind.SCALAR || prop.kind === ReferenceKind.MANY_TO_ONE || (prop.kind === ReferenceKind.ONE_TO_ONE && prop.owner)),
      )
      .map((prop) => ({ name: prop.name, column: prop.fieldNames[0]!, date: prop.runtimeType === 'Date', onRequest: Boolean(prop.lazy || prop.hidden) }));
    STORED.set(entity, stored);
  }
  return stored;
}

const DERIVED = new WeakMap<object, Record<string, string[]>>();

/** Declares the stored properties a getter of `entity` shown as a field reads (`hasPolicy` reads `policy`). */
export function derivedFields(entity: EntityClass<object>, derived: Record<string, string[]>): void {
  DERIVED.set(entity, { ...DERIVED.get(entity), ...derived });
}

/**
 * The stored properties a selection of `fields` of `entity` reads: its id, its to-one relations' ids
 * (so `agentId` of a to-one `agent` needs nothing more), the stored properties among `fields`, and the
 * properties `derived` (or derivedFields) names for a field computed from them (`audience` from `audienceId`).
 * A field that is none of these (a getter, a field resolver) takes every stored property, so nothing
 * a resolver reads is missing, but a lazy or hidden one (a document's text, a secret), which is read
 * only when a field names it. `ignore`: fields that need only the id (relations read by their own batch).
 */
export function selectedProperties(
  em: EntityManager,
  entity: EntityClass<object>,
  fields: Iterable<string>,
  derived: Record<string, string[]> = {},
  ignore: ReadonlySet<string> = new Set(),
): { props: { name: string; column: string }[]; all: boolean } {
  const stored = storedProperties(em, entity);
  const byName = new Map(stored.map((prop) => [prop.name, prop]));
  const toOne = new Set(toOneProperties(em, entity));
  const wanted = new Set<string>(['id', ...toOne]);
  derived = { ...DERIVED.get(entity), ...derived };
  let all = false;
  for (const field of fields) {
    if (field.startsWith('__') || ignore.has(field)) continue;
    if (byName.has(field)) wanted.add(field);
    else if (derived[field]) for (const name of derived[field]) wanted.add(name);
    else if (!(field.endsWith('Id') && toOne.has(field.slice(0, -2)))) all = true;
  }
  return { props: stored.filter((prop) => wanted.has(prop.name) || (all && !prop.onRequest)), all };
}

/** `json_build_object(...)` of the row `alias` of `entity`, keyed by property name, holding what `selectedProperties` reads. */
export function jsonObjectSql(
  em: EntityManager,
  entity: EntityClass<object>,
  alias: string,
  fields: Iterable<string>,
  derived: Record<string, string[]> = {},
): string {
  const { props } = selectedProperties(em, entity, fields, derived);
  return `json_build_object(${props.map((prop) => `'${prop.name}', ${alias}."${prop.column}"`).join(', ')})`;
}

/** A JSON object built by `jsonObjectSql` as a read object: dates as Date, to-one relations as `{ id }`. */
export function fromJson<T extends object>(em: EntityManager, entity: EntityClass<T>, json: Record<string, unknown>): T {
  for (const prop of storedProperties(em, entity)) {
    const value = json[prop.name];
    if (prop.date && typeof value === 'string') json[prop.name] = new Date(value);
  }
  return toReadObject(em, entity, json);
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
