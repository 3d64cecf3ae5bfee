import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import {
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { ERROR_STATUS, ERROR_TITLE } from '../common/errors.js';
import { PAGE_HEADERS } from './array-page.js';
import { OMIT_MARKER, type JsonSchema, type RouteDefinition } from './routes.js';

const SCALARS: Record<string, JsonSchema> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  DateTimeISO: { type: 'string', format: 'date-time' },
  JSONObject: { type: 'object', additionalProperties: true },
};

/** JSON schema of a GraphQL output type; object types become components, collected in `pending`. */
function outputSchema(type: GraphQLOutputType, pending: Set<string>): { schema: JsonSchema; required: boolean } {
  if (isNonNullType(type)) return { schema: outputSchema(type.ofType, pending).schema, required: true };
  if (isListType(type)) return { schema: { type: 'array', items: outputSchema(type.ofType, pending).schema }, required: false };
  if (isScalarType(type)) return { schema: SCALARS[type.name] ?? {}, required: false };
  if (isEnumType(type)) return { schema: { type: 'string', enum: type.getValues().map((value) => value.value) }, required: false };
  pending.add(type.name);
  return { schema: { $ref: `#/components/schemas/${type.name}` }, required: false };
}

function objectTypeSchema(schema: GraphQLSchema, name: string, pending: Set<string>): JsonSchema {
  const type = schema.getType(name);
  if (!type || !isObjectType(type)) throw new Error(`OpenAPI: no GraphQL object type ${name}`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (field.args.length > 0) continue;
    const { schema: fieldSchema, required: isRequired } = outputSchema(field.type, pending);
    properties[field.name] = isRequired
      ? { ...fieldSchema, ...(field.description ? { description: field.description } : {}) }
      : { anyOf: [fieldSchema, { type: 'null' }], ...(field.description ? { description: field.description } : {}) };
    if (isRequired) required.push(field.name);
  }
  return { type: 'object', ...(type.description ? { description: type.description } : {}), properties, required };
}

/** Replaces refWithout markers by the type's schema minus the omitted fields. */
function inlineOmissions(value: unknown, schema: GraphQLSchema, pending: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => inlineOmissions(item, schema, pending));
  if (!value || typeof value !== 'object') return value;
  const marker = (value as Record<string, unknown>)[OMIT_MARKER] as { typeName: string; omit: string[] } | undefined;
  if (marker) {
    const full = objectTypeSchema(schema, marker.typeName, pending) as { properties: Record<string, JsonSchema>; required: string[] };
    const properties = Object.fromEntries(Object.entries(full.properties).filter(([name]) => !marker.omit.includes(name)));
    const required = full.required.filter((name) => !marker.omit.includes(name));
    // Closed: the point of the shape is what it leaves out.
    return { ...full, description: `A ${marker.typeName} without ${marker.omit.join(', ')}`, properties, required, additionalProperties: false };
  }
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inlineOmissions(inner, schema, pending)]));
}

function collectRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, into));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') into.add(inner.replace('#/components/schemas/', ''));
      else collectRefs(inner, into);
    }
  }
}

const PROBLEM: JsonSchema = {
  type: 'object',
  description: 'RFC 9457 problem details',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    requestId: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
    },
  },
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
};

function problemResponse(status: number): JsonSchema {
  const title = Object.entries(ERROR_STATUS).find(([, value]) => value === status)?.[0];
  return {
    description: title ? ERROR_TITLE[title as keyof typeof ERROR_TITLE] : 'Error',
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

/** The OpenAPI 3.1 document of the REST door, built from the route declarations and the type classes. */
export function buildOpenApi(routes: RouteDefinition[], schema: GraphQLSchema, version: string): JsonSchema {
  const inputSchemas = validationMetadatasToSchemas({
    refPointerPrefix: '#/components/schemas/',
    // @Type(() => X) names the class of a nested input (nullable and array properties reflect as Object/Array).
    classTransformerMetadataStorage: defaultMetadataStorage,
    // Dates are sent as ISO 8601 strings; a relative bound (a function) has no JSON form.
    additionalConverters: {
      isDate: { type: 'string', format: 'date-time' },
      minDate: (meta) => (typeof meta.constraints[0] === 'function' ? { description: 'must be in the future' } : {}),
    },
  }) as Record<string, JsonSchema>;
  const components: Record<string, JsonSchema> = { Problem: PROBLEM };
  const pending = new Set<string>();
  const paths: Record<string, Record<string, JsonSchema>> = {};

  for (const route of routes) {
    const parameters: JsonSchema[] = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (route.idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Replays the first answer for the same key and body for 24 hours; another body with the key → 409',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    if (route.query) {
      const querySchema = inputSchemas[route.query.name] ?? { properties: {} };
      for (const [name, property] of Object.entries((querySchema.properties ?? {}) as Record<string, JsonSchema>)) {
        parameters.push({ name, in: 'query', required: false, schema: property });
      }
    }
    const responses: Record<string, JsonSchema> = {};
    const status = route.status ?? 200;
    if (status === 204 || !route.response) responses[String(status)] = { description: 'Done' };
    else {
      const response = inlineOmissions(route.response, schema, pending) as JsonSchema;
      collectRefs(response, pending);
      responses[String(status)] = {
        description: 'Success',
        ...(route.pageHeaders ? { headers: PAGE_HEADERS } : {}),
        content: { 'application/json': { schema: response } },
      };
    }
    for (const errorStatus of [...(route.body || route.query ? [400] : []), 401, ...(route.errors ?? []), ...(route.body ? [415] : []), 500]) {
      responses[String(errorStatus)] = problemResponse(errorStatus);
    }
    if (route.body) {
      const name = route.body.name;
      components[name] = inputSchemas[name] ?? { type: 'object' };
      collectRefs(components[name], pending);
    }
    paths[`/api${route.path}`] ??= {};
    paths[`/api${route.path}`]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: [{ apiKey: [] }, { bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.body.name}` } } } } }
        : {}),
      responses,
    };
  }

  while (pending.size > 0) {
    const [name] = pending;
    pending.delete(name!);
    if (components[name!]) continue;
    components[name!] = inputSchemas[name!] ?? objectTypeSchema(schema, name!, pending);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Telephony agent gateway',
      version,
      description: 'REST door of the gateway. Every route needs x-api-key or Authorization: Bearer. Errors are RFC 9457 problem details.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
  };
}
