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

const HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': {
    description: 'The id of this request (the one sent, when it was sane); the server log carries it too',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: 'Requests allowed in the current one-minute window (when rate limiting is on)',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key and body',
    schema: { type: 'string', enum: ['true'] },
  },
};

const headerRefs = (...names: string[]): Record<string, JsonSchema> =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const SUCCESS_HEADERS = headerRefs('X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');

function problemResponse(status: number): JsonSchema {
  const title = Object.entries(ERROR_STATUS).find(([, value]) => value === status)?.[0];
  return {
    description: title ? ERROR_TITLE[title as keyof typeof ERROR_TITLE] : 'Error',
    headers: status === 429 || status === 503 ? { ...SUCCESS_HEADERS, ...headerRefs('Retry-After') } : SUCCESS_HEADERS,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

/**
 * Every error status an operation can answer: what every route may answer (400 for unknown query
 * parameters or bad input, 401, 429 over a rate limit, 500, 503 when the database or a provider is
 * away), what a write may (403 by role, 413 over BODY_LIMIT_BYTES), a path id (404), an
 * Idempotency-Key (409 for another body or a request still running), a body (415), and the route's own.
 */
function errorStatuses(route: RouteDefinition): number[] {
  const write = route.method !== 'get';
  const statuses = new Set<number>([
    400,
    401,
    ...(write && !route.path.startsWith('/auth/') ? [403] : []),
    ...(route.path.includes('{') ? [404] : []),
    ...(route.idempotent ? [409] : []),
    ...(write || route.body ? [413] : []),
    ...(route.body ? [415] : []),
    ...(route.errors ?? []),
    429,
    500,
    503,
  ]);
  return [...statuses].sort((a, b) => a - b);
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
      responses[String(status)] = { description: 'Success', content: { 'application/json': { schema: response } } };
    }
    responses[String(status)]!.headers = {
      ...SUCCESS_HEADERS,
      ...(route.idempotent ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}),
    };
    for (const errorStatus of errorStatuses(route)) {
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
      // The token exchange takes an API key only; every other route takes either.
      security: route.operationId === 'createAccessToken' ? [{ apiKey: [] }] : [{ apiKey: [] }, { bearer: [] }],
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
      headers: HEADERS,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
  };
}
