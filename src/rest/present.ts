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
import { chargeAnswer, isLargeValue } from '../platform/answer-budget.js';

/**
 * Marks a GraphQL field (`@Extensions(GRAPHQL_ONLY)`) that the REST door does not show: a relation
 * resolved on GraphQL only, whose id REST shows instead. Neither the presenter nor the OpenAPI document has it.
 */
export const GRAPHQL_ONLY = { graphqlOnly: true } as const;

/** Whether a field's extensions carry the GRAPHQL_ONLY mark. */
export function isGraphqlOnly(extensions: Readonly<Record<string, unknown>> | null | undefined): boolean {
  return extensions?.graphqlOnly === true;
}

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

  constructor(private readonly schema: GraphQLSchema) {}

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
