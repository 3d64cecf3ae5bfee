import type { EntityClass } from '@mikro-orm/core';
import type { EntityManager, QBFilterQuery } from '@mikro-orm/postgresql';
import { AppError } from '../common/errors.js';
import { pageMeta, type Page, type PageMeta } from '../common/pagination.js';
import { fromJson, jsonObjectSql, preload, preloaded, readPage, type ListRead, type NestedSelect, type ReadOptions } from './read-model.js';

// One-to-many relations read with their parents' page. A relation is declared once (which parent,
// which child entity, how its rows are found, filtered and ordered for a set of arguments); a list
// whose selection asks for it plainly then reads every parent's page of children in the list's own
// statement, as a correlated subquery per parent row with its own LIMIT/OFFSET that answers JSON
// holding only the columns the selection needs. The relation's field resolver answers from what was
// read with the parent (`preloadedRelation`) and falls back to its DataLoader batch otherwise.
//
// The read path must give the batch's answer, never another one: the same organization scope, the
// same filters and order (the declaration writes them once for both where it can), the same page
// and meta, the same presentation (read objects of the same entity class, dates as Date). What it
// cannot express declines (`declines`), and the batch answers as before.
//
// What stays with the ORM and the batches, and why: every write (the unit of work needs managed
// entities); a single record (`agent(id)`: one row, its relations batched); a relation of rows that
// are themselves nested (programs → executions → calls: one batch per level, still constant in page
// size); a relation of a list that is itself a batch (`executions(programId)` → calls,
// `conversations(agentId)` → messages); an endpoint's deliveries, each of which carries its attempts;
// a document's text (charged to the answer budget per base by the batch); a relation selected twice,
// under a directive or with arguments its field refuses.
//
// The plain lists read with readPage too: call flows, carrier connections, API keys, users, teams, the
// credit ledger, do-not-call, business entities and webhook endpoints (their read objects carry the
// lazy secret columns, which neither door shows: both show only the GraphQL type's fields). Two lists
// still read managed entities with findAndCount, because their rows are changed after the list: phone
// numbers (the REST list replaces each number's carrierConnection with the loaded connection) and an
// endpoint's deliveries (the service sets each delivery's attempts).

/** What every relation's arguments have: a page of the children. */
export interface RelationPageArgs {
  page: number;
  limit: number;
}

/** The children of the parent row aliased `parent`, as SQL over the child table aliased `x`. */
export interface RelationSource {
  /** `from <child table> x` and any join (which must not repeat a child row). */
  from: string;
  /** Ties a child to `parent` (its foreign key), the organization scope and the arguments' filters. */
  where: string;
  params: unknown[];
  /** The batch's order over `x`, ending with a unique column so pages never overlap. */
  order: string;
}

export interface NestedRelation<Args extends RelationPageArgs = RelationPageArgs> {
  /** The entity whose list pages carry the relation. */
  parent: EntityClass<object>;
  /** The GraphQL field on the parent's type. */
  field: string;
  /** The entity of the children: the read objects answered are of this class, as the batch's. */
  entity: EntityClass<object>;
  /** `page`: answers `{ data, meta }`; `list`: the page's rows alone. */
  shape: 'page' | 'list';
  /** The arguments that tell two pages apart, in a fixed order (the preload key). */
  argNames: readonly (keyof Args & string)[];
  /** The field's raw arguments as the resolver would get them (validated), or null where they are refused. */
  readArgs(raw: Record<string, unknown>): Promise<Args | null>;
  /** The children of `parent` for `args`; throws AppError for arguments the batch refuses too. */
  source(parent: string, organizationId: string, args: Args): RelationSource;
  /** Fields of the child computed from stored properties (`agent` from `agent`), see jsonObjectSql. */
  derived?: Record<string, string[]>;
  /** Child fields the read path cannot answer as the batch does (then the batch answers). */
  declines?(fields: ReadonlySet<string>): boolean;
  /**
   * The batch writes each page's cursors (pagesByParent's keyset), which a read with the parents' page
   * does not: a `meta` that selects a cursor is then answered by the batch.
   */
  cursors?: true;
}

/** The PageMeta fields only a relation's batch answers (see NestedRelation.cursors). */
export const CURSOR_FIELDS: readonly string[] = ['nextCursor', 'prevCursor', 'lastCursor'];

/** A relation a list reads with its rows, for one set of arguments and the child fields selected. */
export interface NestedRead {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a read of any relation of the registry
  relation: NestedRelation<any>;
  args: RelationPageArgs;
  /** The child fields the selection asks for (`*` where unknown: every stored column). */
  fields: ReadonlySet<string>;
  /** Whether the selection asks for `meta` (page-shaped relations): only then is the count read. */
  withTotal: boolean;
}

/**
 * What a list's GraphQL selection tells it about its rows: the relations to read with them, and the
 * fields it shows (null where unknown: every column, as the REST door and the batches read).
 */
export interface PageSelection {
  reads: readonly NestedRead[];
  fields: ReadonlySet<string> | null;
}

/** Every column and no relation: what a list reads when no selection is known (REST, other callers). */
export const WHOLE_ROWS: PageSelection = { reads: [], fields: null };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry of relations, each with its own argument type
const RELATIONS = new Map<EntityClass<object>, NestedRelation<any>[]>();

/** Declares a relation; a list of its parent then reads it with its rows when asked (see `relationsOf`). */
export function nestedRelation<Args extends RelationPageArgs>(relation: NestedRelation<Args>): NestedRelation<Args> {
  const declared = RELATIONS.get(relation.parent) ?? [];
  if (declared.some((each) => each.field === relation.field)) throw new Error(`${relation.field} is declared twice`);
  RELATIONS.set(relation.parent, [...declared, relation]);
  return relation;
}

/** The relations declared on `parent` (modules declare theirs when they load, like their resolvers). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry of relations, each with its own argument type
export function relationsOf(parent: EntityClass<object>): readonly NestedRelation<any>[] {
  return RELATIONS.get(parent) ?? [];
}

/** The name a relation's answer for `args` is kept under on its parent, and the batch's loader under. */
export function relationKey<Args extends RelationPageArgs>(relation: NestedRelation<Args>, args: Args): string {
  return `${relation.field}|${JSON.stringify(relation.argNames.map((name) => args[name] ?? null))}`;
}

/** The answer read with `parent` for `args`, or undefined (then the caller's batch answers). */
export function preloadedRelation<T, Args extends RelationPageArgs>(parent: object, relation: NestedRelation<Args>, args: Args): T | undefined {
  return preloaded<T>(parent, relationKey(relation, args));
}

/** The SQL of each read: its rows as a JSON array, and its count where `meta` is selected. */
export function nestedSelects(
  em: EntityManager,
  organizationId: string,
  reads: readonly NestedRead[],
): { read: NestedRead; data: NestedSelect; total: NestedSelect | null }[] {
  return reads.flatMap((read) => {
    const { relation, args } = read;
    const key = relationKey(relation, args);
    const x = (parent: string): RelationSource => relation.source(parent, organizationId, args);
    let params: unknown[];
    try {
      // Built once before the statement, to learn the arguments' refusals (the parameters do not depend on the alias).
      params = x('p').params;
    } catch (error) {
      // Arguments the batch refuses too: left to the field, which refuses them per parent as before.
      if (error instanceof AppError) return [];
      throw error;
    }
    const object = jsonObjectSql(em, relation.entity, 'x', read.fields, relation.derived);
    const data: NestedSelect = {
      name: `${key}|data`,
      sql: (alias) => {
        const { from, where, order } = x(alias);
        return `select coalesce(json_agg(${object} order by ${order}), '[]'::json) from (select x.* ${from} where ${where} order by ${order} limit ? offset ?) x`;
      },
      params: [...params, args.limit, (args.page - 1) * args.limit],
    };
    const total: NestedSelect | null =
      relation.shape === 'page' && read.withTotal
        ? {
            name: `${key}|total`,
            sql: (alias) => {
              const { from, where } = x(alias);
              return `select count(*)::int ${from} where ${where}`;
            },
            params,
          }
        : null;
    return [{ read, data, total }];
  });
}

/** Keeps each parent's children (from the values `readPage` answered per row) as the relation's answer. */
export function attachNested(
  em: EntityManager,
  parents: readonly object[],
  values: readonly Record<string, unknown>[],
  selects: ReturnType<typeof nestedSelects>,
): void {
  for (const { read, data, total } of selects) {
    const { relation, args } = read;
    const key = relationKey(relation, args);
    parents.forEach((parent, index) => {
      const rows = (values[index]![data.name] as Record<string, unknown>[]).map((row) => fromJson(em, relation.entity, row));
      if (relation.shape === 'list') return preload(parent, key, rows);
      const answer: Page<object> = total
        ? { data: rows, meta: pageMeta(args.page, args.limit, Number(values[index]![total.name])) }
        : // meta was not selected: nothing reads it, and nothing may pretend to know the total
          (Object.defineProperty({ data: rows }, 'meta', {
            get: () => {
              throw new Error('meta was not read with this page');
            },
          }) as Page<object>);
      preload(parent, key, answer);
    });
  }
}

/**
 * `readPage` with the relations `reads` asks for read in the page's statement and kept on each row
 * (their field resolvers answer from there), and only the columns `fields` needs (a declared relation's
 * field needs only the id, even when its batch answers it). WHOLE_ROWS: the plain page, as `readPage`.
 */
export async function readPageWith<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: QBFilterQuery<T>,
  options: ReadOptions<T> & { limit: number; offset: number },
  include: PageSelection & { organizationId: string },
): Promise<{ rows: T[]; total: number; meta: PageMeta }> {
  const selects = nestedSelects(em, include.organizationId, include.reads);
  const nested = selects.flatMap(({ data, total }) => (total ? [data, total] : [data]));
  const fields = include.fields ? { names: include.fields, ignore: new Set(relationsOf(entity).map((relation) => relation.field)) } : null;
  const { rows, total, nested: values, meta } = await readPage(em, entity, where, { ...options, nested: [...(options.nested ?? []), ...nested], fields });
  attachNested(em, rows, values, selects);
  return { rows, total, meta };
}

/** `read` as a page of read objects, with the relations and columns `include` asks for (readPageWith). */
export async function readListWith<T extends object>(
  em: EntityManager,
  read: ListRead<T>,
  include: PageSelection & { organizationId: string },
): Promise<Page<T>> {
  const { rows, meta } = await readPageWith(em, read.entity, read.where, read.options, include);
  return { data: rows, meta };
}
