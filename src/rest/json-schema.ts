// The JSON Schema pieces route tables and answer types describe their bodies with; the OpenAPI
// builder (openapi.ts) resolves the references and markers. A module of its own, so that a types
// module can describe an answer without importing the routes' machinery.

export type JsonSchema = Record<string, unknown>;

/** `$ref` to a GraphQL object type; the OpenAPI builder turns it into a component schema. */
export function ref(typeName: string): JsonSchema {
  return { $ref: `#/components/schemas/${typeName}` };
}

/** A GraphQL object type without some of its fields (a list item that leaves out a large field). */
export function refWithout(typeName: string, omit: string[]): JsonSchema {
  return { [OMIT_MARKER]: { typeName, omit } };
}

/** A GraphQL object type with only some of its fields, as a named component (`#/components/schemas/<typeName>`) REST shows instead of the full type. */
export function refPicking(typeName: string, pick: readonly string[]): JsonSchema {
  return { [OMIT_MARKER]: { typeName, omit: [], pick: [...pick] } };
}

export const OMIT_MARKER = 'x-gateway-omit';

export function arrayOf(items: JsonSchema): JsonSchema {
  return { type: 'array', items };
}

export function objectOf(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}
