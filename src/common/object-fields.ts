import { getMetadataStorage } from 'type-graphql';

/** The @Field names and types of a class and of the classes it extends. */
function fieldsOf(type: Function): { name: string; getType: () => unknown }[] {
  const chain: Function[] = [];
  for (let current: Function | undefined = type; current && current !== Function.prototype; current = Object.getPrototypeOf(current)) chain.push(current);
  return getMetadataStorage().fields.filter((field) => chain.includes(field.target));
}

/**
 * A stored JSON value of a GraphQL object type (a call's turnLatency, its analysis) with every field of
 * the type, null where nothing was stored: as GraphQL shows it, and as the OpenAPI document, whose every
 * answer field is required, says REST and the event payloads do. Nested object types are filled the same
 * way; keys the type does not declare are left out, dates become ISO 8601.
 */
export function withEveryField(type: Function, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => withEveryField(type, item));
  const objectTypes = getMetadataStorage().objectTypes;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fieldsOf(type)) {
    const inner = source[field.name];
    const fieldType = field.getType();
    if (typeof fieldType === 'function' && objectTypes.some((objectType) => objectType.target === fieldType))
      out[field.name] = withEveryField(fieldType, inner);
    else out[field.name] = inner instanceof Date ? inner.toISOString() : (inner ?? null);
  }
  return out;
}
