import type { EntityClass, EntityMetadata, EntityProperty, MetadataStorage } from '@mikro-orm/core';
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLEnumType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { createHash } from 'node:crypto';
import type { Actor } from '../common/actor.js';
import { COUNTED_PAGE_FIELDS, type JsonPage, type PageMeta } from '../common/pagination.js';
import { validArgs } from '../common/validation.js';
import { CURSOR_FIELDS, relationsOf, type NestedRelation, type RelationPageArgs } from '../db/nested-relation.js';
import type { RowJson } from '../db/read-model.js';
import { fieldSql, isPlainColumn, jsonListSql } from '../rest/present-sql.js';
import type { GraphQLContext } from './context.js';

// Pages answered by PostgreSQL. A query whose every field the database can write (a root list of a
// service's page, the stored and computed fields of its rows, their JSON columns by the selected
// sub-fields, and one level of declared relations with their own pages) is compiled into the list's
// one statement, which answers each row as the JSON of its selection (aliases, __typename and all):
// the REST lists' technique (src/rest/present-sql.ts) applied to a GraphQL selection. graphql-jit,
// the resolvers, the read objects and the per-field walk are skipped, and so is serializing the rows
// (stringifyResult copies them in); Apollo's parsing, validation and plugins (authentication, armor,
// the cost limit) are not.
//
// It can make a query cheaper, never different (the same JSON, key for key; its rows are sent as
// PostgreSQL wrote them, spaced as the REST lists are): anything it does not compile (a field with a
// resolver of its own, a directive, an interface, a relation of a relation, a field selected twice
// under one name, a non-null field over a nullable column, arguments the resolver would refuse) and
// any error on the way (a refusal, a lost database) leave the whole operation to the executor, which
// answers it as it always did, errors included. So does a row holding a value graphql-js would refuse
// or convert (stored JSON not of its GraphQL type, a text outside its enum): the statement checks
// every value it writes and stops at such a row (see typeCheck). test/graphql/sql-answers.test.ts compares both
// answers for the same data on both databases.

/** A root list the database can answer: its service's page, each row as the JSON `row` builds. */
export interface SqlList<Args extends object> {
  /** The Query field. */
  field: string;
  /** The entity of the page's rows. */
  entity: EntityClass<object>;
  /** The field's arguments class, validated as TypeGraphQL validates it. */
  args: new () => Args;
  /** The page, as the resolver reads it (the same service, actor and arguments). */
  read(context: GraphQLContext, actor: Actor, args: Args, row: RowJson): Promise<JsonPage>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry of lists, each with its own row type
const LISTS = new Map<string, SqlList<any>>();

let answered = 0;

/** How many operations the database has answered whole in this process (the tests' witness that it did). */
export function answeredByDatabase(): number {
  return answered;
}

/** Declares a root list answerable by the database (beside its resolver, which stays the reference). */
export function sqlList<Args extends object>(list: SqlList<Args>): void {
  if (LISTS.has(list.field)) throw new Error(`${list.field} is declared twice`);
  LISTS.set(list.field, list);
}

/** The root row's alias while compiling: no GraphQL name or SQL of ours has it, and the statement's own replaces it. */
const ROW = '@@row@@';

/** json_build_object takes at most 100 arguments. */
const MAX_FIELDS = 50;

/** Where the SQL of one answer is assembled: text and its parameters, in order. */
class Sql {
  text = '';
  readonly params: unknown[] = [];
  add(text: string, ...params: unknown[]): this {
    this.text += text;
    this.params.push(...params);
    return this;
  }
}

/** A field of the selection: its response key and node. */
interface Selected {
  key: string;
  node: FieldNode;
}

/** The fields directly in a selection set (fragments on `type` spread), or null where anything makes it not plain. */
function selectedFields(set: SelectionSetNode | undefined, type: GraphQLObjectType, fragments: Record<string, FragmentDefinitionNode>): Selected[] | null {
  const found: Selected[] = [];
  const keys = new Set<string>();
  const walk = (inner: SelectionSetNode | undefined): boolean => {
    for (const selection of inner?.selections ?? []) {
      if (selection.directives?.length) return false;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (keys.has(key)) return false;
        keys.add(key);
        found.push({ key, node: selection });
        continue;
      }
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments[selection.name.value];
      if (!fragment) return false;
      if (fragment.typeCondition && fragment.typeCondition.name.value !== type.name) return false;
      if (fragment.directives?.length) return false;
      if (!walk(fragment.selectionSet)) return false;
    }
    return true;
  };
  return walk(set) && found.length <= MAX_FIELDS ? found : null;
}

interface Compiling {
  metadata: MetadataStorage;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  organizationId: string;
  /** Whether a relation may be read here (one level: a relation's rows do not read theirs). */
  relations: boolean;
}

/** The SQL of a row of `type` (`entity`, aliased `alias`) as the JSON of `set`, or null when any field is not compiled. */
async function rowSql(
  c: Compiling,
  type: GraphQLObjectType,
  entity: EntityClass<object>,
  set: SelectionSetNode | undefined,
  alias: string,
): Promise<Sql | null> {
  const selected = selectedFields(set, type, c.fragments);
  if (!selected) return null;
  const meta = c.metadata.get(entity);
  // What the row's values must hold for the executor to answer them without an error (see typeCheck).
  const checks: string[] = [];
  const sql = new Sql().add('json_build_object(');
  for (const [index, { key, node }] of selected.entries()) {
    sql.add(`${index > 0 ? ', ' : ''}'${key}', `);
    const name = node.name.value;
    if (name === '__typename') {
      sql.add(`'${type.name}'`);
      continue;
    }
    const field = type.getFields()[name];
    if (!field) return null;
    const relation = relationsOf(entity).find((each) => each.field === name);
    if (relation) {
      if (!c.relations) return null;
      const part = await relationSql(c, field, node, relation, alias);
      if (!part) return null;
      sql.add(part.text, ...part.params);
      continue;
    }
    if (field.args.length > 0) return null;
    const part = valueSql(meta, field, node, c, alias, checks);
    if (part === null) return null;
    sql.add(part);
  }
  sql.add(')');
  if (checks.length === 0) return sql;
  // A row the executor would answer with an error (a value that is not of its GraphQL type) stops the
  // statement (a division by zero, evaluated for that row only), and the executor answers the operation.
  // The division names the row's key, not the whole row: a whole-row reference makes a relation's
  // subquery read and carry every column of each row (its JSON documents too), whatever is selected.
  const key = columnOf(meta.properties[meta.primaryKeys[0] as never] as EntityProperty, alias);
  const checked = new Sql().add(`case when ${checks.join(' and ')} then `).add(sql.text, ...sql.params);
  return checked.add(` else (1 / (0 * length(${key}::text)))::text::json end`);
}

/** A stored column's SQL name over `alias`. */
function columnOf(prop: EntityProperty, alias: string): string {
  return `${alias}."${prop.fieldNames[0]!.replace(/"/g, '""')}"`;
}

/**
 * A predicate over the jsonb `value` (SQL null for a missing key): true where graphql-js would serialize
 * it as `fieldType` (the selection `set` for objects) without an error and as JSON writes it; null when
 * the type has a scalar this does not check (the field is then not compiled).
 */
function typeCheck(fieldType: GraphQLOutputType, value: string, set: SelectionSetNode | undefined, c: Compiling, depth: number): string | null {
  const absent = `(${value} is null or jsonb_typeof(${value}) = 'null')`;
  if (isNonNullType(fieldType)) {
    const inner = presentCheck(fieldType.ofType, value, set, c, depth);
    return inner && `(not ${absent} and ${inner})`;
  }
  const inner = presentCheck(fieldType, value, set, c, depth);
  return inner && `(${absent} or ${inner})`;
}

/** typeCheck of a value known to be present (not null). */
function presentCheck(type: GraphQLOutputType, value: string, set: SelectionSetNode | undefined, c: Compiling, depth: number): string | null {
  if (isEnumType(type)) {
    return `(jsonb_typeof(${value}) = 'string' and (${value} #>> '{}') in ${enumValuesSql(type)})`;
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'String':
      case 'ID':
        return `jsonb_typeof(${value}) = 'string'`;
      case 'Boolean':
        return `jsonb_typeof(${value}) = 'boolean'`;
      case 'Float':
        return `jsonb_typeof(${value}) = 'number'`;
      case 'Int':
        return `(jsonb_typeof(${value}) = 'number' and ${value}::numeric between -2147483648 and 2147483647 and ${value}::numeric = trunc(${value}::numeric))`;
      case 'JSONObject':
        return `jsonb_typeof(${value}) = 'object'`;
      default:
        return null;
    }
  }
  if (isListType(type)) {
    const alias = `check_${depth}`;
    const item = typeCheck(type.ofType, `${alias}.value`, set, c, depth + 1);
    return item && `(jsonb_typeof(${value}) = 'array' and not exists (select 1 from jsonb_array_elements(${value}) as ${alias}(value) where not ${item}))`;
  }
  if (!isObjectType(type)) return null;
  const selected = selectedFields(set, type, c.fragments);
  if (!selected) return null;
  const parts = [`jsonb_typeof(${value}) = 'object'`];
  for (const { node } of selected) {
    if (node.name.value === '__typename') continue;
    const field = type.getFields()[node.name.value];
    if (!field) return null;
    const part = typeCheck(field.type, `(${value}->'${field.name}')`, node.selectionSet, c, depth);
    if (!part) return null;
    parts.push(part);
  }
  return `(${parts.join(' and ')})`;
}

/** A field without arguments: a stored or computed column, a to-one id, or a JSON column by its selected sub-fields. */
function valueSql(meta: EntityMetadata, field: GraphQLField<unknown, unknown>, node: FieldNode, c: Compiling, alias: string, checks: string[]): string | null {
  const named = getNamedType(field.type);
  const prop = meta.properties[field.name as never] as EntityProperty | undefined;
  const json = prop !== undefined && /^jsonb?$/.test(String(prop.columnTypes?.[0] ?? '').toLowerCase());
  if (isObjectType(named)) {
    // A JSON column shown as an object (or a list of them): only its selected sub-fields.
    if (field.resolve || !json || !isPlainColumn(prop)) return null;
    const check = typeCheck(field.type, columnOf(prop, alias), node.selectionSet, c, 0);
    const value = jsonValueSql(field.type, node.selectionSet, c, 0);
    if (!check || !value) return null;
    checks.push(check);
    return value(columnOf(prop, alias));
  }
  if (!shownAsStored(named)) return null;
  const compiled = fieldSql(meta, field);
  if (!compiled) return null;
  // A stored property behind a resolver of its own may be shown otherwise than stored: left to the resolver.
  if (prop && field.resolve && !isComputed(meta, field.name)) return null;
  if (prop && isNonNullType(field.type) && prop.nullable) return null;
  if (prop && json) {
    // A JSON column shown as a scalar (JSONObject): what it holds is not held to the type by the database.
    const check = prop.fieldNames?.length === 1 ? typeCheck(field.type, columnOf(prop, alias), undefined, c, 0) : null;
    if (!check) return null;
    checks.push(check);
  } else if (prop && isEnumType(named) && prop.fieldNames?.length === 1) {
    // A text column shown as an enum: only its values.
    const column = columnOf(prop, alias);
    checks.push(`(${column} is null or ${column} in ${enumValuesSql(named)})`);
  }
  return compiled(alias);
}

function isComputed(meta: EntityMetadata, name: string): boolean {
  const prop = meta.properties[name as never] as EntityProperty | undefined;
  return prop === undefined || prop.persist === false;
}

/** A value read from JSON (a jsonb expression) shown as `fieldType` with the selection `set` (objects by their selected fields). */
function jsonValueSql(fieldType: GraphQLOutputType, set: SelectionSetNode | undefined, c: Compiling, depth: number): ((value: string) => string) | null {
  const type = getNullableType(fieldType);
  if (isScalarType(type) || isEnumType(type)) return set || !shownAsStored(type) ? null : (value) => value;
  if (isListType(type)) {
    const item = getNullableType(type.ofType);
    if (isScalarType(item) || isEnumType(item)) return set || !shownAsStored(item) ? null : (value) => value;
    const each = jsonValueSql(item, set, c, depth + 1);
    // Each level of lists its own alias, so an inner list never reads the outer one's items.
    return each && ((value) => jsonListSql(value, `item_${depth}`, each));
  }
  if (!isObjectType(type)) return null;
  const selected = selectedFields(set, type, c.fragments);
  if (!selected) return null;
  const parts: ((value: string) => string)[] = [];
  for (const { node } of selected) {
    const name = node.name.value;
    if (name === '__typename') {
      parts.push(() => `'${type.name}'`);
      continue;
    }
    const field = type.getFields()[name];
    if (!field || field.args.length > 0 || field.resolve) return null;
    const part = jsonValueSql(field.type, node.selectionSet, c, depth);
    if (!part) return null;
    parts.push((value) => part(`(${value}->'${name}')`));
  }
  return (value) =>
    `case when coalesce(jsonb_typeof(${value}), 'null') = 'null' then null else json_build_object(${selected
      .map(({ key }, index) => `'${key}', ${parts[index]!(value)}`)
      .join(', ')}) end`;
}

/** An enum's values as an SQL list, `('a', 'b')` (GraphQL names: letters, digits and underscores only). */
function enumValuesSql(type: GraphQLEnumType): string {
  return `(${type
    .getValues()
    .map((each) => `'${each.name}'`)
    .join(', ')})`;
}

/** An enum whose GraphQL names are its stored values (GraphQL shows the name), or any scalar. */
function shownAsStored(type: GraphQLOutputType): boolean {
  return !isEnumType(type) || type.getValues().every((value) => value.value === value.name);
}

/** A declared relation of the row aliased `parent`: its page (or list) of children as JSON, in a correlated subquery. */
async function relationSql(
  c: Compiling,
  field: GraphQLField<unknown, unknown>,
  node: FieldNode,
  relation: NestedRelation<RelationPageArgs>,
  parent: string,
): Promise<Sql | null> {
  let args: RelationPageArgs | null;
  try {
    args = await relation.readArgs(getArgumentValues(field, node, c.variables));
  } catch {
    return null;
  }
  if (!args) return null;
  const pageType = getNamedType(field.type);
  if (!isObjectType(pageType)) return null;
  let rowsSet: SelectionSetNode | undefined = node.selectionSet;
  let itemType: GraphQLObjectType = pageType;
  let pageSelection: Selected[] | null = null;
  if (relation.shape === 'page') {
    pageSelection = selectedFields(node.selectionSet, pageType, c.fragments);
    if (!pageSelection) return null;
    const data = pageSelection.filter((each) => each.node.name.value === 'data');
    if (data.length > 1) return null;
    rowsSet = data[0]?.node.selectionSet;
    const dataField = pageType.getFields().data;
    const item = dataField && getNamedType(dataField.type);
    if (!item || !isObjectType(item)) return null;
    itemType = item;
  }
  const rowFields = rowsSet ? selectedFields(rowsSet, itemType, c.fragments) : [];
  if (!rowFields) return null;
  if (relation.declines?.(new Set(rowFields.map((each) => each.node.name.value)))) return null;
  let source;
  try {
    source = relation.source(parent, c.organizationId, args);
  } catch {
    return null;
  }
  const row = await rowSql({ ...c, relations: false }, itemType, relation.entity, rowsSet, 'x');
  if (!row) return null;
  const rows = new Sql()
    .add(
      `(select coalesce(json_agg(${row.text} order by ${source.order}), '[]'::json) from (select x.* ${source.from} where ${source.where}`,
      ...row.params,
      ...source.params,
    )
    .add(` order by ${source.order} limit ? offset ?) x)`, args.limit, (args.page - 1) * args.limit);
  if (relation.shape === 'list') return rows;
  const sql = new Sql().add('json_build_object(');
  for (const [index, { key, node: each }] of pageSelection!.entries()) {
    sql.add(`${index > 0 ? ', ' : ''}'${key}', `);
    const name = each.name.value;
    if (name === '__typename') sql.add(`'${pageType.name}'`);
    else if (name === 'data') sql.add(rows.text, ...rows.params);
    else if (name === 'meta') {
      // Cursors are written by the relation's batch only.
      if (relation.cursors && selectsCursors(c, each, pageType)) return null;
      const meta = metaSql(c, each, pageType, (total) => total.add(`(select count(*)::int ${source.from} where ${source.where})`, ...source.params), args);
      if (!meta) return null;
      sql.add(meta.text, ...meta.params);
    } else return null;
  }
  return sql.add(')');
}

/** Whether the selection of a page's `meta` asks for a cursor (or cannot be read). */
function selectsCursors(c: Compiling, node: FieldNode, pageType: GraphQLObjectType): boolean {
  const metaType = getNamedType(pageType.getFields().meta?.type);
  const selected = metaType && isObjectType(metaType) ? selectedFields(node.selectionSet, metaType, c.fragments) : null;
  return !selected || selected.some((each) => CURSOR_FIELDS.includes(each.node.name.value));
}

/** A page's meta as SQL (pageMeta's arithmetic over the count `total` writes). */
function metaSql(c: Compiling, node: FieldNode, pageType: GraphQLObjectType, total: (sql: Sql) => Sql, args: RelationPageArgs): Sql | null {
  const metaType = getNamedType(pageType.getFields().meta?.type);
  if (!metaType || !isObjectType(metaType)) return null;
  const selected = selectedFields(node.selectionSet, metaType, c.fragments);
  if (!selected) return null;
  const sql = new Sql().add('(select json_build_object(');
  for (const [index, { key, node: each }] of selected.entries()) {
    sql.add(`${index > 0 ? ', ' : ''}'${key}', `);
    switch (each.name.value) {
      case '__typename':
        sql.add(`'${metaType.name}'`);
        break;
      case 'page':
        sql.add('?::int', args.page);
        break;
      case 'limit':
        sql.add('?::int', args.limit);
        break;
      case 'total':
        sql.add('t.n');
        break;
      case 'totalPages':
        sql.add('ceil(t.n::numeric / ?::int)::int', args.limit);
        break;
      case 'hasNextPage':
        sql.add('?::int < ceil(t.n::numeric / ?::int)', args.page, args.limit);
        break;
      case 'hasPreviousPage':
        sql.add('?::int > 1', args.page);
        break;
      default:
        return null;
    }
  }
  sql.add(') from (select ');
  total(sql);
  return sql.add(' as n) t)');
}

/** One root field of a compiled operation: `__typename`, or a list read with its row's JSON. */
type RootPlan =
  | { key: string; typename: string }
  | {
      key: string;
      list: SqlList<object>;
      args: object;
      row: RowJson;
      pageType: string;
      /** The page's selection: `data`, `meta` (by its own selection) and `__typename`, in order. */
      page: { key: string; name: 'data' | 'meta' | '__typename' }[];
      meta: { key: string; name: string }[];
      metaType: string;
    };

/** A root list compiled, or null when any part of it is not. */
async function rootPlan(c: Compiling, key: string, node: FieldNode, field: GraphQLField<unknown, unknown>, list: SqlList<object>): Promise<RootPlan | null> {
  const pageType = getNamedType(field.type);
  if (!isObjectType(pageType)) return null;
  const pageSelection = selectedFields(node.selectionSet, pageType, c.fragments);
  if (!pageSelection) return null;
  const args = await validArgs(list.args, getArgumentValues(field, node, c.variables));
  if (!args) return null;
  const page: { key: string; name: 'data' | 'meta' | '__typename' }[] = [];
  for (const { key: pageKey, node: each } of pageSelection) {
    const name = each.name.value;
    if (name !== 'data' && name !== 'meta' && name !== '__typename') return null;
    if (name !== '__typename' && page.some((other) => other.name === name)) return null;
    page.push({ key: pageKey, name });
  }
  const itemType = getNamedType(pageType.getFields().data?.type);
  const metaType = getNamedType(pageType.getFields().meta?.type);
  if (!itemType || !isObjectType(itemType) || !metaType || !isObjectType(metaType)) return null;
  const dataNode = pageSelection.find((each) => each.node.name.value === 'data')?.node;
  const metaNode = pageSelection.find((each) => each.node.name.value === 'meta')?.node;
  const row = dataNode ? await rowSql(c, itemType, list.entity, dataNode.selectionSet, ROW) : new Sql().add('null');
  if (!row) return null;
  const metaSelected = metaNode ? selectedFields(metaNode.selectionSet, metaType, c.fragments) : [];
  if (!metaSelected) return null;
  const meta = metaSelected.map(({ key: metaKey, node: each }) => ({ key: metaKey, name: each.name.value }));
  if (meta.some(({ name }) => name !== '__typename' && !PAGE_META_FIELDS.has(name))) return null;
  const text = row.text;
  // The list is counted only when the selection shows the count or what is computed from it.
  const counted = meta.some(({ name }) => COUNTED_PAGE_FIELDS.has(name));
  return {
    key,
    list,
    args,
    row: { key: statementKey(text), sql: (alias) => `${text.replaceAll(ROW, alias)}::text`, params: row.params, total: counted },
    pageType: pageType.name,
    page,
    meta,
    metaType: metaType.name,
  };
}

const PAGE_META_FIELDS = new Set(['page', 'limit', 'total', 'totalPages', 'hasNextPage', 'hasPreviousPage', 'nextCursor', 'prevCursor', 'lastCursor']);

/** A short name for a row's SQL in the kept statements' keys (the text itself is long); computed once per plan. */
function statementKey(text: string): string {
  return `gql|${createHash('sha256').update(text).digest('base64url')}`;
}

/** Compiled operations, per parsed document (Apollo keeps one per query text), by operation, organization and variables. */
const PLANS = new WeakMap<DocumentNode, Map<string, RootPlan[] | null>>();
const MAX_PLANS = 100;

/** What an operation is compiled from: the schema and metadata, the parsed operation, its variables and the caller's organization. */
interface Operation {
  schema: GraphQLSchema;
  metadata: MetadataStorage;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown>;
  organizationId: string;
}

async function planOf(op: Operation): Promise<RootPlan[] | null> {
  let plans = PLANS.get(op.document);
  if (!plans) PLANS.set(op.document, (plans = new Map()));
  const key = `${op.operation.name?.value ?? ''}|${op.organizationId}|${JSON.stringify(op.variables)}`;
  const known = plans.get(key);
  if (known !== undefined) return known;
  const plan = await compile(op);
  if (plans.size >= MAX_PLANS) plans.clear();
  plans.set(key, plan);
  return plan;
}

async function compile({ schema, metadata, document, operation, variables, organizationId }: Operation): Promise<RootPlan[] | null> {
  const query = schema.getQueryType();
  if (operation.operation !== 'query' || !query) return null;
  // Keyed by names and aliases the query chose: without a prototype, `__proto__` is a key like any other.
  const fragments = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  const roots = selectedFields(operation.selectionSet, query, fragments);
  if (!roots || roots.length === 0) return null;
  const c: Compiling = { metadata, fragments, variables, organizationId, relations: true };
  const plan: RootPlan[] = [];
  try {
    for (const { key, node } of roots) {
      const name = node.name.value;
      if (name === '__typename') {
        plan.push({ key, typename: query.name });
        continue;
      }
      const list = LISTS.get(name);
      const root = list ? await rootPlan(c, key, node, query.getFields()[name]!, list) : null;
      if (!root) return null;
      plan.push(root);
    }
  } catch {
    // Arguments graphql-js refuses (getArgumentValues): the executor refuses them.
    return null;
  }
  return plan;
}

/**
 * The operation's answer written by the database, or null when any part of it is not compiled (or
 * anything failed on the way): the executor then answers the whole operation.
 */
export async function sqlAnswer(
  schema: GraphQLSchema,
  metadata: MetadataStorage,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  context: GraphQLContext,
): Promise<ExecutionResult | null> {
  const actor = context.actor;
  if (operation.operation !== 'query' || !actor || context.signal?.aborted) return null;
  const plan = await planOf({ schema, metadata, document, operation, variables, organizationId: actor.organizationId });
  if (!plan) return null;
  const data = Object.create(null) as Record<string, unknown>;
  try {
    for (const root of plan) {
      if ('typename' in root) {
        data[root.key] = root.typename;
        continue;
      }
      const page = await root.list.read(context, actor, root.args, root.row);
      const json = `[${page.json.join(',')}]`;
      context.answerBudget?.charge(json.length);
      const answer = Object.create(null) as Record<string, unknown>;
      for (const { key, name } of root.page) {
        if (name === '__typename') answer[key] = root.pageType;
        else if (name === 'data') answer[key] = new DatabaseJson(json);
        else {
          const meta = Object.create(null) as Record<string, unknown>;
          for (const each of root.meta) meta[each.key] = each.name === '__typename' ? root.metaType : page.meta[each.name as keyof PageMeta];
          answer[key] = meta;
        }
      }
      data[root.key] = answer;
    }
  } catch {
    // Over the answer budget: the refusal is the answer (the plugin writes it); anything else (a refusal, a lost database), the executor answers.
    if (context.answerBudget?.exceeded) return { data: null, errors: [context.answerBudget.exceeded as never] };
    return null;
  }
  answered++;
  WRITTEN_BY_DATABASE.add(data);
  return { data };
}

/**
 * A page's items as the database wrote them: JSON text, sent as it is (stringifyResult) rather than
 * parsed here and stringified again by Apollo, which cost about a tenth of such a request's CPU. Anything
 * else that serializes it gets the parsed value (toJSON), so it is never shown as anything but its JSON.
 */
class DatabaseJson {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** The `data` of the answers sqlAnswer wrote (the same object Apollo hands to stringifyResult). */
const WRITTEN_BY_DATABASE = new WeakSet<object>();

/**
 * A GraphQL response as JSON text, as Apollo writes it (JSON.stringify and a newline), except that a
 * page the database wrote is copied in as its text. The object around it (the roots, each page's
 * meta and __typename, the response's other members) is written member by member, in order, as
 * JSON.stringify writes it.
 */
export function stringifyResult(result: object): string {
  const data = (result as { data?: unknown }).data;
  if (!data || typeof data !== 'object' || !WRITTEN_BY_DATABASE.has(data)) return `${JSON.stringify(result)}\n`;
  return `${writeJson(result)}\n`;
}

function writeJson(value: unknown): string {
  if (value instanceof DatabaseJson) return value.text;
  if (value === null || typeof value !== 'object' || 'toJSON' in value) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : writeJson(item))).join(',')}]`;
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    members.push(`${JSON.stringify(key)}:${writeJson(member)}`);
  }
  return `{${members.join(',')}}`;
}
