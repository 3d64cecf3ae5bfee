import { ReferenceKind, type EntityClass, type EntityMetadata, type EntityProperty, type MetadataStorage } from '@mikro-orm/core';
import {
  getNullableType,
  isEnumType,
  isListType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { computedSqlOf, isoDateSql, type ComputedSql, type RowJson } from '../db/read-model.js';
import { isGraphqlOnly } from './graphql-only.js';

// The REST door's list answers, built as JSON by PostgreSQL. The JS presenter (present.ts) shapes
// each row's read object by the fields of its GraphQL type, and Express serializes the result: for
// a page of agents, PostgreSQL formats every column as text, pg parses it back (dates, JSON
// columns), the presenter copies it and JSON.stringify writes it out again — most of the CPU a list
// request cost besides the request's floor. Here the same fields of the same GraphQL type are
// compiled once into one SQL expression (`json_build_object`, dates as `Date#toISOString` writes
// them), so each row arrives as the JSON text of its answer and is sent as it is.
//
// The expression is derived, not written by hand: a field is the entity's stored property of the
// same name (a text, uuid, integer, boolean, timestamptz or JSON column), the id of its to-one
// relation `<relation>Id`, an object or list of objects read from a JSON column by the sub-type's
// fields, or a computed field whose SQL is declared beside its getter (`computedFieldSql`). A type
// with any other field cannot be compiled, and its routes keep the JS presenter: `row()` answers
// null. test/platform/json-answers.test.ts checks, on both databases, that both presenters answer
// the same JSON for the same rows, edge values included.

/** A JSON text the database built; the REST door sends it as it is (src/rest/routes.ts). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Column types whose text PostgreSQL writes into JSON as the JS presenter shows the value pg parsed. */
const PLAIN_COLUMN = /^(uuid|text|varchar(\(\d+\))?|character varying(\(\d+\))?|int|integer|int4|smallint|int2|boolean|bool)$/;
const JSON_COLUMN = /^jsonb?$/;
const TEXT_COLUMN = /^(text|varchar(\(\d+\))?|character varying(\(\d+\))?)$/;
/** json_build_object takes at most 100 arguments. */
const MAX_FIELDS = 50;

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class SqlPresenter {
  private readonly rows = new Map<string, RowJson | null>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly metadata: MetadataStorage,
  ) {}

  /**
   * The JSON of one `entity` row as the GraphQL type `typeName` shows it on REST (its fields without
   * arguments and not GRAPHQL_ONLY, or only `fields`, in that order); null when a field cannot be compiled.
   */
  row(typeName: string, entity: EntityClass<object>, fields?: readonly string[]): RowJson | null {
    const key = `${typeName}:${entity.name}:${fields?.join(',') ?? '*'}`;
    if (this.rows.has(key)) return this.rows.get(key)!;
    const type = this.schema.getType(typeName);
    if (!type || !isObjectType(type)) throw new Error(`No GraphQL object type named ${typeName}`);
    const shown = fields ? fields.map((name) => type.getFields()[name]) : shownFields(type);
    const meta = this.metadata.get(entity);
    const parts = shown.length > MAX_FIELDS || shown.some((field) => !field) ? null : shown.map((field) => fieldSql(meta, field!));
    let row: RowJson | null = null;
    if (parts && parts.every((part) => part !== null)) {
      const body = (alias: string) => `json_build_object(${shown.map((field, index) => `'${field!.name}', ${parts[index]!(alias)}`).join(', ')})::text`;
      const byAlias = new Map<string, string>();
      row = {
        key,
        sql(alias) {
          let sql = byAlias.get(alias);
          if (sql === undefined) byAlias.set(alias, (sql = body(alias)));
          return sql;
        },
      };
    }
    this.rows.set(key, row);
    return row;
  }
}

/** The fields the REST door shows of a type: as the JS presenter picks them. */
function shownFields(type: GraphQLObjectType): GraphQLField<unknown, unknown>[] {
  return Object.values(type.getFields()).filter((field) => field.args.length === 0 && !isGraphqlOnly(field.extensions));
}

/** One field of a row over its alias, or null when it is none of the kinds this compiles. */
export function fieldSql(meta: EntityMetadata, field: GraphQLField<unknown, unknown>): ComputedSql | null {
  const computed = computedSqlOf(meta.class as EntityClass<object>, field.name);
  if (computed) return computed;
  const prop = meta.properties[field.name as never] as EntityProperty | undefined;
  if (prop) return storedSql(prop, field.type);
  // `agentId` of a to-one `agent`: its foreign key.
  const relation = field.name.endsWith('Id') ? (meta.properties[field.name.slice(0, -2) as never] as EntityProperty | undefined) : undefined;
  const type = getNullableType(field.type);
  if (
    relation &&
    (relation.kind === ReferenceKind.MANY_TO_ONE || (relation.kind === ReferenceKind.ONE_TO_ONE && relation.owner)) &&
    relation.fieldNames?.length === 1 &&
    isScalarType(type)
  ) {
    const column = quoted(relation.fieldNames[0]!);
    return (alias) => `${alias}.${column}`;
  }
  return null;
}

/** A property stored in one column of its own, read with every row (no formula, not lazy, not hidden). */
export function isPlainColumn(prop: EntityProperty): boolean {
  return prop.kind === ReferenceKind.SCALAR && !prop.formula && prop.persist !== false && !prop.lazy && !prop.hidden && prop.fieldNames?.length === 1;
}

/** A stored column shown as the GraphQL `type`. */
function storedSql(prop: EntityProperty, fieldType: GraphQLOutputType): ComputedSql | null {
  if (!isPlainColumn(prop)) return null;
  const columnType = String(prop.columnTypes?.[0] ?? '').toLowerCase();
  const column = quoted(prop.fieldNames[0]!);
  const type = getNullableType(fieldType);
  if (JSON_COLUMN.test(columnType)) {
    const value = jsonValueSql(type);
    return value && ((alias) => value(`${alias}.${column}`));
  }
  if (!isScalarType(type) && !isEnumType(type)) return null;
  if (columnType === 'timestamptz' && prop.runtimeType === 'Date') return (alias) => isoDateSql(`${alias}.${column}`);
  if (PLAIN_COLUMN.test(columnType) && ['string', 'number', 'boolean'].includes(String(prop.runtimeType))) return (alias) => `${alias}.${column}`;
  // A text column whose property type the metadata could not read (`string | null` with Opt): pg answers it as a string all the same.
  if (TEXT_COLUMN.test(columnType) && !prop.customType && ['unknown', 'any'].includes(String(prop.runtimeType))) return (alias) => `${alias}.${column}`;
  return null;
}

/** A jsonb array `value`, each item (aliased `alias`, `alias.value`) as `each` writes it, in order; null for anything but an array. */
export function jsonListSql(value: string, alias: string, each: (item: string) => string): string {
  return (
    `case when jsonb_typeof(${value}) = 'array' then (select coalesce(json_agg(${each(`${alias}.value`)} order by ${alias}.n), '[]'::json) ` +
    `from jsonb_array_elements(${value}) with ordinality as ${alias}(value, n)) end`
  );
}

/**
 * A JSON value (a jsonb expression) shown as the GraphQL `type`: a scalar as it is, an object by its
 * fields (null for null), a list of objects item by item (null for anything but an array).
 */
function jsonValueSql(fieldType: GraphQLOutputType, depth = 0): ((value: string) => string) | null {
  const type = getNullableType(fieldType);
  if (isScalarType(type) || isEnumType(type)) return (value) => value;
  if (isListType(type)) {
    const item = getNullableType(type.ofType);
    if (isScalarType(item) || isEnumType(item)) return (value) => value;
    // Each level of lists its own alias, so an inner list never reads the outer one's items.
    const alias = `item_${depth}`;
    const each = jsonValueSql(item, depth + 1);
    return each && ((value) => jsonListSql(value, alias, each));
  }
  if (!isObjectType(type)) return null;
  const fields = shownFields(type);
  if (fields.length > MAX_FIELDS) return null;
  const parts = fields.map((field) => jsonValueSql(field.type, depth));
  if (parts.some((part) => part === null)) return null;
  return (value) =>
    `case when coalesce(jsonb_typeof(${value}), 'null') = 'null' then null else json_build_object(${fields
      .map((field, index) => `'${field.name}', ${parts[index]!(`(${value}->'${field.name}')`)}`)
      .join(', ')}) end`;
}
