import {
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';

/**
 * Shapes a service result for the REST door by the fields of its GraphQL type, so both doors
 * show the same fields and nothing a type does not declare (a key hash, an agent's policy) leaks.
 * Fields that take arguments (paged relations) are GraphQL-only and left out.
 */
export class Presenter {
  constructor(private readonly schema: GraphQLSchema) {}

  present(typeName: string, value: unknown): unknown {
    const type = this.schema.getType(typeName);
    if (!type || !isObjectType(type)) throw new Error(`No GraphQL object type named ${typeName}`);
    return this.value(type, value);
  }

  private value(type: GraphQLOutputType, value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (isNonNullType(type)) return this.value(type.ofType, value);
    if (isListType(type)) return (value as unknown[]).map((item) => this.value(type.ofType, item));
    if (isScalarType(type) || isEnumType(type)) return value instanceof Date ? value.toISOString() : value;
    const named = getNamedType(type);
    if (!isObjectType(named)) return value;
    const out: Record<string, unknown> = {};
    for (const field of Object.values(named.getFields())) {
      if (field.args.length > 0) continue;
      const fieldValue = (value as Record<string, unknown>)[field.name];
      if (fieldValue === undefined && !isNonNullType(field.type)) continue;
      out[field.name] = this.value(field.type, fieldValue);
    }
    return out;
  }
}
