import {
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { EntityClass, MetadataStorage } from '@mikro-orm/core';
import type { PageMeta } from '../common/pagination.js';
import type { RowJson } from '../db/read-model.js';
import { chargeAnswer, chargeAnswerBytes, isLargeValue } from '../platform/answer-budget.js';
import { JsonText, SqlPresenter } from './present-sql.js';

import { isGraphqlOnly } from './graphql-only.js';

/** How one value of a GraphQL output type is shaped; built once per type, used for every row. */
type Shape = (value: unknown) => unknown;

/**
 * Shapes a service result for the REST door by the fields of its GraphQL type, so both doors
 * show the same fields and nothing a type does not declare (a key hash, an agent's policy) leaks.
 * Every other field is in every answer, null where GraphQL answers null (the OpenAPI document marks them all
 * required). Fields that take arguments (paged relations) and fields marked GRAPHQL_ONLY are left out.
 * Fields marked LARGE_VALUE are charged to the request's answer budget as they are shaped.
 */
export class Presenter {
  private readonly objects = new Map<string, Shape>();
  private readonly sql: SqlPresenter | null;
  /** The item type of each page type asked for (listAnswer). */
  private readonly itemTypes = new Map<string, string>();

  /** `metadata`: the entities', for answers the database builds as JSON (`rowJson`); without it, none is. */
  constructor(
    private readonly schema: GraphQLSchema,
    metadata?: MetadataStorage,
  ) {
    this.sql = metadata ? new SqlPresenter(schema, metadata) : null;
  }

  /**
   * How the database writes one `entity` row as `present(typeName, row)` would show it (see
   * present-sql.ts), or null when this type cannot be written so: the route then reads and presents rows.
   */
  rowJson(typeName: string, entity: EntityClass<object>, fields?: readonly string[]): RowJson | null {
    return this.sql?.row(typeName, entity, fields) ?? null;
  }

  /**
   * A list's answer as `present(pageTypeName, …)` shows it: written by the database (`json`, with how
   * to write a row of the page's item type and `entity`) when that type compiles (`rowJson`), else
   * read and presented (`rows`).
   */
  async listAnswer(
    pageTypeName: string,
    entity: EntityClass<object>,
    read: { json(row: RowJson): Promise<{ json: string[]; meta: PageMeta }>; rows(): Promise<unknown> },
  ): Promise<unknown> {
    let itemType = this.itemTypes.get(pageTypeName);
    if (itemType === undefined) this.itemTypes.set(pageTypeName, (itemType = this.itemTypeOf(pageTypeName)));
    const row = this.rowJson(itemType, entity);
    return row ? this.jsonPage(pageTypeName, await read.json(row)) : this.present(pageTypeName, await read.rows());
  }

  /** The type of a page type's `data` items (`AgentPage` → `Agent`). */
  private itemTypeOf(pageTypeName: string): string {
    const type = this.schema.getType(pageTypeName);
    const data = type && isObjectType(type) ? type.getFields().data : undefined;
    if (!data) throw new Error(`${pageTypeName} is no page type with data`);
    return getNamedType(data.type).name;
  }

  /**
   * A page whose items the database wrote (`rowJson`), as `present(pageTypeName, page)` shows a page:
   * its fields in the type's order, the items' JSON as it is. The items are charged to the answer budget.
   */
  jsonPage(pageTypeName: string, page: { json: string[]; meta: PageMeta }): JsonText {
    const type = this.schema.getType(pageTypeName);
    if (!type || !isObjectType(type)) throw new Error(`No GraphQL object type named ${pageTypeName}`);
    const parts = Object.keys(type.getFields()).map((name) => {
      if (name === 'data') return `"data":${this.jsonArray(page.json).text}`;
      if (name === 'meta') return `"meta":${JSON.stringify(this.present('PageMeta', page.meta))}`;
      throw new Error(`${pageTypeName} has a field ${name} besides data and meta`);
    });
    return new JsonText(`{${parts.join(',')}}`);
  }

  /** Items the database wrote (`rowJson`) as a JSON array; charged to the answer budget. */
  jsonArray(items: string[]): JsonText {
    let bytes = 0;
    for (const item of items) bytes += item.length;
    chargeAnswerBytes(bytes);
    return new JsonText(`[${items.join(',')}]`);
  }

  present(typeName: string, value: unknown): unknown {
    const type = this.schema.getType(typeName);
    if (!type || !isObjectType(type)) throw new Error(`No GraphQL object type named ${typeName}`);
    return this.object(type)(value);
  }

  private shape(type: GraphQLOutputType): Shape {
    if (isNonNullType(type)) return this.shape(type.ofType);
    if (isListType(type)) {
      const item = this.shape(type.ofType);
      return (value) => (value === null || value === undefined ? null : (value as unknown[]).map(item));
    }
    if (isScalarType(type) || isEnumType(type)) {
      return (value) => (value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : value);
    }
    const named = getNamedType(type);
    if (!isObjectType(named)) return (value) => (value === undefined ? null : value);
    // Looked up when called: object types can refer to each other (and to themselves).
    return (value) => this.object(named)(value);
  }

  private object(type: GraphQLObjectType): Shape {
    let shape = this.objects.get(type.name);
    if (shape) return shape;
    const fields = Object.values(type.getFields())
      .filter((field) => field.args.length === 0 && !isGraphqlOnly(field.extensions))
      .map((field) => ({
        name: field.name,
        largeValue: isLargeValue(field.extensions),
        shape: this.shape(field.type),
      }));
    shape = (value) => {
      if (value === null || value === undefined) return null;
      const source = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const field of fields) {
        const fieldValue = source[field.name];
        // As on GraphQL: a value no input limit bounds is charged to the answer budget before the body is built.
        if (field.largeValue) chargeAnswer(fieldValue);
        out[field.name] = field.shape(fieldValue);
      }
      return out;
    };
    this.objects.set(type.name, shape);
    return shape;
  }
}
