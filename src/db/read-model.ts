import { raw, ReferenceKind, type EntityClass, type QueryOrderMap } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import { pageMeta, type JsonPage, type Page, type PageMeta } from '../common/pagination.js';
import { isUuid } from './base.entity.js';
import { cannotPrepare, poolOf, preparedStatement, runPrepared, type PreparedStatement } from './prepared-reads.js';
import { keysetMeta, keysetPlan, keysetRows, type Keyset } from './keyset.js';
import { unforkedRequestOptions } from './request-scope.js';

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
  /** Keyset paging (keyset.ts): the list's order and the cursor asked for; the page's meta then carries cursors. */
  keyset?: Keyset;
  /**
   * The list's size as one scalar SQL (a counter triggers keep), read instead of counting the matching
   * rows; only for criteria that filter nothing the counter does not.
   */
  count?: { key: string; sql: string; params: unknown[] };
  /** Conditions over the row alias added to the criteria (a keyset's), each keyed by its shape. */
  conditions?: { key: string; sql(alias: string): string; params: unknown[] }[];
}

/** A value computed per parent row in the parent's own statement: `sql(alias)` sees the parent's table as `alias`. */
export interface NestedSelect {
  name: string;
  sql(alias: string): string;
  params: unknown[];
  /** Names `sql` in the kept statements' keys, when its text is long (a row's JSON); else the text itself does. */
  key?: string;
}

/** One row's answer as JSON text, built by the database over the row's table alias (src/rest/present-sql.ts). */
export interface RowJson {
  readonly key: string;
  sql(alias: string): string;
  /** The values of the `?` placeholders in `sql`, in order (none by default). */
  readonly params?: unknown[];
  /**
   * false when nobody reads the list's size (a GraphQL page whose selection asks for no `total`,
   * `totalPages` or `hasNextPage`): the statement then counts nothing (no `count(*) over ()`, which reads
   * every matching row before the page can be cut), and the page's meta holds only its page and limit.
   */
  readonly total?: boolean;
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
  const { rows } = await selectRows(em, entity, where, ['*'], [], options);
  return rows.map((row) => toReadObject(em, entity, row));
}

// The statements of these reads are kept once built. A list request used to build its statement with
// MikroORM's QueryBuilder every time (the criteria walked, every name quoted, the SQL assembled):
// about a tenth of a page request's CPU, for a statement that differs from the last one of the same
// shape only in its values. So a read's shape (the entity, the criteria with each value replaced by a
// numbered slot, the columns, the order, the nested selects' SQL, whether it is limited and offset)
// keys the SQL the QueryBuilder built for it once, with placeholders, and which slot each placeholder
// takes; the next read of that shape only fills the values in. The QueryBuilder builds the statement
// from stand-ins (`slotValue`), so a shape whose values it transforms, inlines or adds to (a custom
// type, a boolean, a date, a fragment of raw SQL in the criteria) finds a parameter that is no stand-in
// and is never kept: those reads keep building their statement every time, as before.

interface KeptStatement {
  sql: string;
  /** For each placeholder of `sql`, in order, the slot whose value it takes. */
  slots: number[];
  /** `sql` as PostgreSQL's pool runs it (prepared-reads.ts); null once PostgreSQL refused to prepare it. */
  prepared: PreparedStatement | null;
}

/** Statements by shape; null: a shape that cannot be kept. Bounded: started again when full. */
const STATEMENTS = new Map<string, KeptStatement | null>();
const MAX_STATEMENTS = 1000;

/** A stand-in per slot: strings for strings, numbers no read uses for numbers (the stand-in keeps the value's type, which a JSON criterion's cast depends on). */
const SLOT_PREFIX = '__read_model_slot_';
const SLOT_NUMBER_BASE = 9_000_000_000_000;
function slotValue(slot: number, value: unknown): unknown {
  return typeof value === 'number' ? SLOT_NUMBER_BASE + slot : `${SLOT_PREFIX}${slot}__`;
}
function slotOf(parameter: unknown, slots: number): number | null {
  if (typeof parameter === 'number') {
    const slot = parameter - SLOT_NUMBER_BASE;
    return Number.isInteger(slot) && slot >= 0 && slot < slots ? slot : null;
  }
  if (typeof parameter !== 'string' || !parameter.startsWith(SLOT_PREFIX)) return null;
  const slot = Number(parameter.slice(SLOT_PREFIX.length, -2));
  return Number.isInteger(slot) && slot >= 0 && slot < slots ? slot : null;
}

/** A placeholder, or a stand-in the QueryBuilder wrote into the SQL as a literal (a raw fragment's parameters: the nested selects'). */
const PLACEHOLDER_OR_INLINED = new RegExp(`\\?|'${SLOT_PREFIX}(\\d+)__'|\\b${SLOT_NUMBER_BASE / 1e3}(\\d{3})\\b`, 'g');

/**
 * The statement the QueryBuilder built from stand-ins as a kept statement: every placeholder and every
 * stand-in written in as a literal becomes a placeholder taking its slot, in the order they appear.
 * Null when anything is not a stand-in, or when the SQL has a question mark that is no placeholder.
 */
function template(query: { sql: string; params: readonly unknown[] }, slots: number, literals: ReadonlyMap<number, number>): KeptStatement | null {
  if (query.sql.includes('??') || query.sql.includes('\\?')) return null;
  const order: number[] = [];
  let next = 0;
  let refused = false;
  const sql = query.sql.replace(PLACEHOLDER_OR_INLINED, (match, text: string | undefined, digits: string | undefined) => {
    const slot = match === '?' ? slotOf(query.params[next++], slots) : Number(text ?? digits);
    if (slot === null || !(slot < slots)) refused = true;
    else if (literals.has(slot)) return String(literals.get(slot));
    else order.push(slot);
    return '?';
  });
  if (refused || next !== query.params.length || sql.includes(SLOT_PREFIX) || sql.includes(String(SLOT_NUMBER_BASE / 1e3))) return null;
  return { sql, slots: order, prepared: preparedStatement(sql) };
}

/**
 * The criteria's shape as text, with every string and finite number replaced by a slot (its value pushed
 * to `values`) in `standIn`; null when they hold anything but plain objects, arrays, strings, numbers,
 * null and undefined (those stay in the shape as they are: booleans, and null for `is null`).
 */
function shapeOf(value: unknown, values: unknown[]): { shape: string; standIn: unknown } | null {
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) {
    const slot = values.push(value) - 1;
    return { shape: `$${typeof value}`, standIn: slotValue(slot, value) };
  }
  if (value === null || value === undefined || typeof value === 'boolean') return { shape: String(value), standIn: value };
  if (Array.isArray(value)) {
    const items = value.map((item) => shapeOf(item, values));
    if (items.some((item) => item === null)) return null;
    return { shape: `[${items.map((item) => item!.shape).join(',')}]`, standIn: items.map((item) => item!.standIn) };
  }
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return null;
  let shape = '{';
  const standIn: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    // A search is planned for its pattern: as a kept statement's parameter, PostgreSQL's generic plan
    // cannot tell a rare pattern from a common one, and walked a million rows by the order's index
    // looking for the page's matches instead of asking the trigram index for them.
    if (key === '$ilike') return null;
    const inner = shapeOf((value as Record<string, unknown>)[key], values);
    if (inner === null) return null;
    shape += `${JSON.stringify(key)}:${inner.shape},`;
    standIn[key] = inner.standIn;
  }
  return { shape: `${shape}}`, standIn };
}

/**
 * The rows of a read, mapped to property names as the QueryBuilder maps them: `columns` (property
 * names, or `*`); beside each row in `extras`, the page's total as `__total` (when `total`) and each
 * nested select as `__nested_<i>` (with no column, no rows: the extras alone). Built by the
 * QueryBuilder once per shape, then from the kept statement (above). The extras are never left on
 * (nor deleted from) the mapped rows: a property deleted from an object turns it into a dictionary in
 * V8, slow to read for every field GraphQL or the presenter reads from it afterwards, and to key a
 * WeakMap (the preloaded relations) with.
 */
async function selectRows<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  columns: string[],
  nested: NestedSelect[],
  options: ReadOptions<T>,
  total = false,
): Promise<{ rows: Record<string, unknown>[]; extras: Record<string, unknown>[] }> {
  const values: unknown[] = [];
  const criteria = shapeOf(where, values);
  const nestedParams = nested.map((each) => each.params.map((param) => shapeOf(param, values)));
  const conditions = options.conditions ?? [];
  const conditionParams = conditions.map((each) => each.params.map((param) => shapeOf(param, values)));
  const count = total ? options.count : undefined;
  const countParams = (count?.params ?? []).map((param) => shapeOf(param, values));
  const limit = options.limit === undefined ? undefined : shapeOf(options.limit, values);
  const offset = options.offset === undefined ? undefined : shapeOf(options.offset, values);
  // The page's limit, and its offset when it is 0 (the first page), are written into the kept statement
  // as numbers, the statement kept per value. As parameters, PostgreSQL's generic plan guesses a tenth
  // of the rows for them, costs more than a custom plan, and is never chosen: every execution planned
  // the statement again (agents → conversations: 0.23 ms of bind in 0.9). Written in, the generic plan
  // costs what a custom one does, and PostgreSQL keeps it after five executions. Later pages keep the
  // offset a parameter, or every page would be a statement of its own.
  const literals = new Map<number, number>();
  const literal = (shaped: { standIn: unknown } | null | undefined, value: number | undefined) => {
    if (!shaped || value === undefined || !Number.isSafeInteger(value) || value < 0) return '$';
    literals.set((shaped.standIn as number) - SLOT_NUMBER_BASE, value);
    return value;
  };
  const limitKey = literal(limit, options.limit);
  const offsetKey = literal(offset, options.offset === 0 ? 0 : undefined);
  const keepable =
    criteria !== null &&
    limit !== null &&
    offset !== null &&
    [...nestedParams, ...conditionParams, countParams].every((params) => params.every((param) => param !== null && param.shape.startsWith('$'))) &&
    (limit === undefined || limit.shape === '$number') &&
    (offset === undefined || offset.shape === '$number');
  const key = keepable
    ? JSON.stringify([
        entity.name,
        criteria.shape,
        columns,
        total,
        options.orderBy ?? null,
        nested.map((each) => [each.key ?? each.sql('__alias__'), each.params.length]),
        conditions.map((each) => [each.key, each.params.length]),
        count ? [count.key, count.params.length] : null,
        limit === undefined ? null : limitKey,
        offset === undefined ? null : offsetKey,
      ])
    : null;
  let kept = key === null ? null : STATEMENTS.get(key);
  const build = (useStandIns: boolean) => {
    const qb = em.createQueryBuilder(entity);
    const params = (index: number) => (useStandIns ? nestedParams[index]!.map((param) => param!.standIn) : nested[index]!.params);
    const counting = count
      ? raw(`(${count.sql}) as "__total"`, useStandIns ? countParams.map((param) => param!.standIn) : count.params)
      : raw('count(*) over () as "__total"');
    qb.select([
      ...(columns as never[]),
      ...(total ? [counting] : []),
      ...nested.map((each, index) => raw(`(${each.sql(qb.alias)}) as "__nested_${index}"`, params(index))),
    ]).where((useStandIns ? criteria!.standIn : where) as never);
    conditions.forEach((each, index) => {
      qb.andWhere(raw(each.sql(qb.alias), useStandIns ? conditionParams[index]!.map((param) => param!.standIn) : each.params));
    });
    applyOptions(qb, useStandIns ? { ...options, limit: limit?.standIn as number | undefined, offset: offset?.standIn as number | undefined } : options);
    return qb;
  };
  if (key !== null && kept === undefined) {
    kept = template(build(true).toQuery(), values.length, literals);
    if (STATEMENTS.size >= MAX_STATEMENTS) STATEMENTS.clear();
    STATEMENTS.set(key, kept);
  }
  const extraNames = [...(total ? ['__total'] : []), ...nested.map((_, index) => `__nested_${index}`)];
  const extras: Record<string, unknown>[] = [];
  if (!kept) {
    const built = (await build(false).execute('all', true)) as Record<string, unknown>[];
    if (extraNames.length === 0) return { rows: built, extras };
    if (columns.length === 0) return { rows: [], extras: built };
    // Already mapped: copied without the extras.
    const rows = built.map((row) => {
      const clean: Record<string, unknown> = {};
      const extra: Record<string, unknown> = {};
      for (const key of Object.keys(row)) (extraNames.includes(key) ? extra : clean)[key] = row[key];
      extras.push(extra);
      return clean;
    });
    return { rows, extras };
  }
  // As QueryBuilder#execute runs it: in the request's transaction if there is one, with its abort signal.
  // A request whose fork is not made yet (request-scope.ts) has no transaction, and its signal is its own.
  const unforked = unforkedRequestOptions(em);
  const abort = unforked ?? (em as unknown as { getAbortOptions(): { signal?: AbortSignal } | undefined }).getAbortOptions();
  const connection = em.getDriver().getConnection(em.config.get('preferReadReplicas') ? 'read' : 'write');
  const params = kept.slots.map((slot) => values[slot]);
  const transaction = unforked ? undefined : em.getTransactionContext();
  const id = unforked ? undefined : em.id;
  const viaOrm = () =>
    connection.execute<Record<string, unknown>[]>(kept.sql, params, 'all', transaction, { id, ...abort } as unknown as Parameters<
      typeof connection.execute
    >[4]);
  const pool = transaction ? undefined : poolOf(connection);
  const prepared = kept.prepared;
  let rows: Record<string, unknown>[];
  if (pool && prepared) {
    try {
      // Through the connection's executeQuery (protected; what its own execute runs through), which times and logs it as the ORM's statements.
      const logged = connection as unknown as { executeQuery<R>(sql: string, run: () => Promise<R>, context: object): Promise<R> };
      rows = await logged.executeQuery(kept.sql, () => runPrepared(pool, prepared, params, abort?.signal), { id, params });
    } catch (error) {
      if (!cannotPrepare(error)) throw error;
      kept.prepared = null;
      rows = await viaOrm();
    }
  } else rows = await viaOrm();
  // Nothing but the extras selected (a page the database wrote as JSON, readJsonPage): the driver's rows
  // are the extras as they are, and there is nothing to map (it cost a mapped object and two deletes a row).
  if (columns.length === 0) return { rows: [], extras: rows };
  const meta = em.getMetadata().get(entity);
  const mapped = rows.map((row) => {
    if (extraNames.length > 0) {
      // Taken off the driver's row, which is dropped once mapped, so the mapped row never holds them.
      const extra: Record<string, unknown> = {};
      for (const name of extraNames) {
        extra[name] = row[name];
        delete row[name];
      }
      extras.push(extra);
    }
    return em.getDriver().mapResult(row as never, meta) as Record<string, unknown>;
  });
  return { rows: mapped, extras };
}

/** The rows of `entity` of one organization with these ids (malformed ids left out), as read objects by id, in one statement. */
export async function readByIds<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, T>> {
  const wanted = [...new Set(ids.filter(isUuid))];
  if (wanted.length === 0) return new Map();
  const rows = await readRows(em, entity, { organization: organizationId, id: { $in: wanted } } as never);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * A page of rows and the number of rows matching `where`, in one statement (`count(*) over ()`, or the
 * list's `count`); a page past the end has no row to carry the count, and costs a second statement.
 * With a keyset (keyset.ts) the page is read by its order's index from a cursor, and its meta carries the
 * cursors of the pages beside it; a cursor's page is counted by a statement of its own (the window
 * count would count only the rows past the cursor).
 */
export async function readPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  options: ReadOptions<T> & { limit: number; offset: number },
): Promise<{ rows: T[]; total: number; nested: Record<string, unknown>[]; meta: PageMeta }> {
  const nested = options.nested ?? [];
  const selected = options.fields ? selectedProperties(em, entity, options.fields.names, {}, options.fields.ignore) : null;
  // A GraphQL page that asks for a few columns reads only those: no parsing of JSON columns, texts and dates nobody shows.
  const columns = selected && !selected.all ? selected.props.map((prop) => prop.name) : ['*'];
  const { rows, extras, total, meta } = await pagedRows(em, entity, where, columns, nested, options, true);
  const values = extras.map((extra) => {
    const byName: Record<string, unknown> = {};
    nested.forEach((each, index) => {
      byName[each.name] = extra[`__nested_${index}`];
    });
    return byName;
  });
  return { rows: rows.map((row) => toReadObject(em, entity, row)), total: total!, nested: values, meta };
}

/** The rows and extras of one page (selectRows), its count, and its meta: by offset, or by keyset when the read has one. */
async function pagedRows<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  columns: string[],
  nested: NestedSelect[],
  options: ReadOptions<T> & { limit: number; offset: number },
  counted: boolean,
): Promise<{ rows: Record<string, unknown>[]; extras: Record<string, unknown>[]; total: number | null; meta: PageMeta }> {
  const { limit, offset, keyset } = options;
  const countAll = async (): Promise<number> => {
    if (!options.count) return em.count(entity, where as never);
    const [row] = await em.execute<{ n: number }[]>(`select (${options.count.sql}) as n`, options.count.params as never[]);
    return Number(row?.n ?? 0);
  };
  if (!keyset) {
    const { rows, extras } = await selectRows(em, entity, where, columns, nested, options, counted);
    const total = !counted ? null : extras.length > 0 ? Number(extras[0]!.__total) : offset === 0 ? 0 : await countAll();
    return { rows, extras, total, meta: pageMeta(Math.floor(offset / limit) + 1, limit, total) };
  }
  const plan = keysetPlan(em, entity as EntityClass<object>, keyset, limit, offset);
  const cursor = keyset.cursor;
  let total: number | null = null;
  if (cursor?.direction === 'last') {
    // The last page holds what is left after the full pages before it, as the same page by number does.
    total = await countAll();
    const pages = Math.max(Math.ceil(total / limit), 1);
    plan.page = pages;
    plan.fetch = Math.max(total - (pages - 1) * limit, 1);
  }
  const keyed = [...nested, { name: '__key', key: `key|${keyset.field}`, sql: plan.keySql, params: [] }];
  const read = {
    ...options,
    orderBy: plan.orderBy as QueryOrderMap<T>[],
    limit: plan.fetch,
    offset: cursor ? 0 : offset,
    conditions: [...(options.conditions ?? []), ...(plan.condition ? [plan.condition] : [])],
  };
  const inWindow = counted && !cursor;
  const { rows, extras } = await selectRows(em, entity, where, columns, keyed, read, inWindow);
  // A page the database wrote as JSON has no mapped rows: its extras are the rows.
  const items = extras.map((extra, index) => ({ row: rows[index]!, extra }));
  const page = keysetRows(plan, items, cursor?.direction === 'last' ? plan.fetch : limit);
  if (inWindow) total = page.rows.length > 0 ? Number(page.rows[0]!.extra.__total) : offset === 0 ? 0 : await countAll();
  else if (counted && total === null) total = await countAll();
  const keys = page.rows.map(({ extra }) => extra[`__nested_${nested.length}`] as string);
  const meta = keysetMeta(keyset, plan, limit, total, keys, page.more);
  return { rows: columns.length === 0 ? [] : page.rows.map(({ row }) => row), extras: page.rows.map(({ extra }) => extra), total, meta };
}

/**
 * A list page as a service reads it for both doors: the entity, its criteria and order, and the page
 * asked for. `readList` answers it as read objects, `readJsonList` as the REST door's JSON.
 */
export interface ListRead<T extends object> {
  entity: EntityClass<T>;
  where: QBFilterQuery<T>;
  options: ReadOptions<T> & { limit: number; offset: number };
  page: number;
  limit: number;
}

/** `read` as a page of read objects. */
export async function readList<T extends object>(em: EntityManager, read: ListRead<T>): Promise<Page<T>> {
  const { rows, meta } = await readPage(em, read.entity, read.where, read.options);
  return { data: rows, meta };
}

/** `read` as a page of rows written as JSON by the database (`row`: src/rest/present-sql.ts). */
export async function readJsonList<T extends object>(em: EntityManager, read: ListRead<T>, row: RowJson): Promise<JsonPage> {
  const { json, meta } = await readJsonPage(em, read.entity, read.where, read.options, row);
  return { json, meta };
}

/**
 * A page of `entity`'s rows matching `where`, each as the JSON text `row` builds, and the number of rows
 * matching (as readPage; null when `row.total` is false): the REST door's list answers, sent as the
 * database wrote them, and the GraphQL pages PostgreSQL answers (src/graphql/sql-answers.ts).
 */
export async function readJsonPage<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  options: ReadOptions<T> & { limit: number; offset: number },
  row: RowJson,
): Promise<{ json: string[]; total: number | null; meta: PageMeta }> {
  const counted = row.total !== false;
  const json: NestedSelect = { name: 'json', key: row.key, sql: (alias) => row.sql(alias), params: row.params ?? [] };
  const { extras, total, meta } = await pagedRows(em, entity, where, [], [json], options, counted);
  return { json: extras.map((each) => each.__nested_0 as string), total, meta };
}

// Relations read with their parents. When a GraphQL selection asks for a relation of every row of a
// page (programs → executions, agents → conversations), the service reads it in the page's own
// statement as a correlated subquery per parent (LIMIT per parent, on the relation's index) that
// answers JSON, holding only the columns the selection needs. The relation's field resolver then
// answers from the parent (`preloaded`) instead of a batch of its own: one statement, and no
// per-column parsing of rows nobody reads. Anything the look-ahead does not cover still goes
// through the per-request DataLoaders.

// Kept on the read object itself, under a symbol (which neither door shows, nor Object.keys nor JSON):
// a WeakMap keyed by the read objects cost a microsecond or more per parent row to fill.
const PRELOADED = Symbol('preloaded relations');
type Preloading = { [PRELOADED]?: Map<string, unknown> };

/** Keeps `value` as the answer of `key` (relation name and arguments) for the read object `parent`. */
export function preload(parent: object, key: string, value: unknown): void {
  const holder = parent as Preloading;
  (holder[PRELOADED] ??= new Map()).set(key, value);
}

/** What `preload` kept for `parent` under `key`, or undefined. */
export function preloaded<V>(parent: object, key: string): V | undefined {
  return (parent as Preloading)[PRELOADED]?.get(key) as V | undefined;
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

/** A field's value as SQL over its row's table alias. */
export type ComputedSql = (alias: string) => string;
const COMPUTED = new WeakMap<object, Record<string, ComputedSql>>();

/**
 * Declares the SQL of fields `entity` computes in a getter (`hasPolicy` from `policy`), over the row's
 * table alias: the getter's answer as a JSON value, for the answers the database writes as JSON.
 */
export function computedFieldSql(entity: EntityClass<object>, fields: Record<string, ComputedSql>): void {
  COMPUTED.set(entity, { ...COMPUTED.get(entity), ...fields });
}

/** What computedFieldSql declared for `field` of `entity`, if anything. */
export function computedSqlOf(entity: EntityClass<object>, field: string): ComputedSql | undefined {
  return COMPUTED.get(entity)?.[field];
}

/** `Date#toISOString()` of a timestamptz column: UTC, milliseconds (truncated, as pg's parsing of the text truncates microseconds). */
export function isoDateSql(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
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
