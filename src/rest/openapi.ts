import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage as getValidationMetadataStorage } from 'class-validator';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { ERROR_STATUS, ERROR_TITLE } from '../common/errors.js';
import { PACKAGE_LICENSE } from '../common/package-info.js';
import { getMetadataStorage, Int } from 'type-graphql';
import { classFieldDescriptions, describeProperties, exampleOf, operationDescription, pathParameterDescription, TAG_DESCRIPTIONS } from './openapi-docs.js';
import { PAGE_HEADERS } from './array-page.js';
import { REQUEST_EXAMPLES } from './openapi-examples.js';
import { isGraphqlOnly } from './graphql-only.js';
import { type RouteDefinition } from './routes.js';
import { type JsonSchema, OMIT_MARKER } from './json-schema.js';

const SCALARS: Record<string, JsonSchema> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  DateTimeISO: { type: 'string', format: 'date-time' },
  JSONObject: { type: 'object', additionalProperties: true },
};

/** JSONObject fields whose shape the server fixes: a named schema instead of a free-form object. */
const KNOWN_OBJECTS: Record<string, string> = { knowledgeBaseConfig: 'KnowledgeBaseConfig' };

const KNOWLEDGE_BASE_CONFIG: JsonSchema = {
  type: 'object',
  description: 'The knowledge base an agent retrieves passages from, with the defaults applied',
  properties: {
    knowledgeBaseId: { type: 'string', format: 'uuid', description: 'A knowledge base of the same organization' },
    topK: { type: 'integer', minimum: 1, maximum: 20, description: 'Passages retrieved per message, 1 to 20 (3 when it was not set)' },
    similarityThreshold: { type: 'number', minimum: 0, maximum: 1, description: 'Minimum similarity of a passage, 0 to 1 (0 when it was not set)' },
  },
  required: ['knowledgeBaseId', 'topK', 'similarityThreshold'],
  additionalProperties: false,
};

/**
 * The schema of a value that may be null, in OpenAPI 3.1's words: `type: [X, 'null']` (and null among
 * an enum's values) where the schema has a type, `anyOf` with null around a `$ref`.
 */
export function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string' || schema.type === undefined) return { anyOf: [schema, { type: 'null' }] };
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  return { ...schema, type: [...types, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
}

/** JSON schema of a GraphQL output type; object types become components, collected in `pending`. Nullable types take null. */
function outputSchema(type: GraphQLOutputType, pending: Set<string>): JsonSchema {
  if (isNonNullType(type)) return nonNullSchema(type.ofType, pending);
  return orNull(nonNullSchema(type, pending));
}

function nonNullSchema(type: GraphQLOutputType, pending: Set<string>): JsonSchema {
  if (isNonNullType(type)) return nonNullSchema(type.ofType, pending);
  if (isListType(type)) return { type: 'array', items: outputSchema(type.ofType, pending) };
  if (isScalarType(type)) return { ...(SCALARS[type.name] ?? {}) };
  if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((value) => value.value) };
  pending.add(type.name);
  return { $ref: `#/components/schemas/${type.name}` };
}

/**
 * The REST shape of a GraphQL object type. The REST presenter writes every field without arguments
 * into every answer (null where GraphQL answers null), so every such field is required, and a
 * nullable one takes null; fields marked GRAPHQL_ONLY are not on this door at all.
 */
function objectTypeSchema(schema: GraphQLSchema, name: string, pending: Set<string>): JsonSchema {
  const type = schema.getType(name);
  if (!type || !isObjectType(type)) throw new Error(`OpenAPI: no GraphQL object type ${name}`);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (field.args.length > 0 || isGraphqlOnly(field.extensions)) continue;
    const known = KNOWN_OBJECTS[field.name];
    const fieldSchema = known
      ? isNonNullType(field.type)
        ? { $ref: `#/components/schemas/${known}` }
        : orNull({ $ref: `#/components/schemas/${known}` })
      : outputSchema(field.type, pending);
    properties[field.name] = { ...fieldSchema, ...(field.description ? { description: field.description } : {}) };
    required.push(field.name);
  }
  return { type: 'object', ...(type.description ? { description: type.description } : {}), properties, required };
}

/** Replaces refWithout markers by the type's schema minus the omitted fields. */
function inlineOmissions(value: unknown, schema: GraphQLSchema, pending: Set<string>, named: Record<string, JsonSchema>): unknown {
  if (Array.isArray(value)) return value.map((item) => inlineOmissions(item, schema, pending, named));
  if (!value || typeof value !== 'object') return value;
  const marker = (value as Record<string, unknown>)[OMIT_MARKER] as { typeName: string; omit: string[]; pick?: string[] } | undefined;
  if (marker?.pick) {
    const full = objectTypeSchema(schema, marker.typeName, pending) as { properties: Record<string, JsonSchema>; required: string[] };
    const properties = Object.fromEntries(marker.pick.map((name) => [name, full.properties[name]!]));
    named[marker.typeName] = { ...full, properties, required: full.required.filter((name) => marker.pick!.includes(name)), additionalProperties: false };
    collectRefs(properties, pending);
    return { $ref: `#/components/schemas/${marker.typeName}` };
  }
  if (marker) {
    const full = objectTypeSchema(schema, marker.typeName, pending) as { properties: Record<string, JsonSchema>; required: string[] };
    const properties = Object.fromEntries(Object.entries(full.properties).filter(([name]) => !marker.omit.includes(name)));
    const required = full.required.filter((name) => !marker.omit.includes(name));
    // Closed: the point of the shape is what it leaves out.
    return { ...full, description: `A ${marker.typeName} without ${marker.omit.join(', ')}`, properties, required, additionalProperties: false };
  }
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inlineOmissions(inner, schema, pending, named)]));
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
  description: 'RFC 9457 problem details: the body of every REST error',
  properties: {
    type: { type: 'string', description: 'A URL of the error’s page under /docs/errors' },
    title: { type: 'string', description: 'The status in words' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status, repeated' },
    detail: { type: 'string', description: 'What went wrong, for a person' },
    code: { type: 'string', enum: Object.keys(ERROR_STATUS), description: 'The error code; GraphQL answers the same one in extensions.code' },
    requestId: { type: 'string', description: 'The id of the request; the server log carries it too' },
    errors: {
      type: 'array',
      description: 'One entry per invalid field (validation failures only)',
      items: {
        type: 'object',
        description: 'One invalid field',
        properties: {
          field: { type: 'string', description: 'The field’s path, e.g. modelConfig.model' },
          message: { type: 'string', description: 'What is wrong with it' },
        },
        required: ['field', 'message'],
      },
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
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example: problemExample(status, title) } },
  };
}

function problemExample(status: number, code: string | undefined): JsonSchema {
  return {
    type: `/docs/errors#${code ?? 'INTERNAL'}`,
    title: code ? ERROR_TITLE[code as keyof typeof ERROR_TITLE] : 'Error',
    status,
    detail: status === 400 ? 'name must be shorter than or equal to 128 characters' : code ? ERROR_TITLE[code as keyof typeof ERROR_TITLE] : 'Error',
    code: code ?? 'INTERNAL',
    requestId: '3f1c9a52-7d0e-4a8b-9c61-2b5e8f4d7a10',
    ...(status === 400 ? { errors: [{ field: 'name', message: 'name must be shorter than or equal to 128 characters' }] } : {}),
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
    ...(route.body || route.rawBody ? [415] : []),
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
  describeInputs(inputSchemas, schema);
  const components: Record<string, JsonSchema> = { Problem: PROBLEM, KnowledgeBaseConfig: KNOWLEDGE_BASE_CONFIG };
  const named: Record<string, JsonSchema> = {};
  const usedTags = new Set<string>();
  const pending = new Set<string>();
  const examplesWanted: JsonSchema[] = [];
  const paths: Record<string, Record<string, JsonSchema>> = {};

  for (const route of routes) {
    const parameters: JsonSchema[] = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      description: pathParameterDescription(route.path, match[1]!),
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
      const descriptions = classFieldDescriptions(route.query);
      for (const [name, property] of Object.entries((querySchema.properties ?? {}) as Record<string, JsonSchema>)) {
        const { description, ...propertySchema } = property;
        parameters.push({
          name,
          in: 'query',
          required: false,
          description: descriptions[name] ?? description ?? (name === 'status' ? 'Only items in this state' : undefined),
          schema: propertySchema,
        });
      }
    }
    const responses: Record<string, JsonSchema> = {};
    const status = route.status ?? 200;
    if (route.streams) {
      responses[String(status)] = {
        description: 'Success, streamed',
        content: { [route.streams.mediaType]: { schema: { type: 'string' }, example: route.streams.example } },
      };
    } else if (status === 204 || !route.response) responses[String(status)] = { description: 'Done' };
    else {
      const response = inlineOmissions(route.response, schema, pending, named) as JsonSchema;
      collectRefs(response, pending);
      responses[String(status)] = { description: 'Success', content: { 'application/json': { schema: response } } };
      examplesWanted.push(responses[String(status)]!.content as JsonSchema);
    }
    responses[String(status)]!.headers = {
      ...SUCCESS_HEADERS,
      ...(route.pageHeaders ? PAGE_HEADERS : {}),
      ...(route.idempotent ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } } : {}),
      ...(route.streams?.headers ?? {}),
    };
    if (route.streams?.noContent) responses['204'] = { description: route.streams.noContent, headers: { ...SUCCESS_HEADERS } };
    if (route.streams?.partial) {
      responses['206'] = {
        description: route.streams.partial,
        content: { [route.streams.mediaType]: { schema: { type: 'string' }, example: route.streams.example } },
        headers: {
          ...SUCCESS_HEADERS,
          ...(route.streams.headers ?? {}),
          'Content-Range': { description: 'bytes <first>-<last>/<size>', schema: { type: 'string' } },
        },
      };
    }
    for (const errorStatus of errorStatuses(route)) {
      responses[String(errorStatus)] = problemResponse(errorStatus);
    }
    // The 415 names the one media type this route reads: JSON, or a raw body's own (a CSV upload).
    if (responses['415']) {
      const taken = route.rawBody ? route.rawBody.mediaType : 'application/json';
      const detail = route.rawBody
        ? `Send the body as ${taken} (got application/json)`
        : 'Send the body as JSON with the header content-type: application/json (got text/plain)';
      const problem = responses['415'].content as Record<string, JsonSchema>;
      responses['415'] = {
        ...responses['415'],
        description: `Unsupported Media Type: the body is not ${taken}`,
        content: {
          'application/problem+json': {
            ...problem['application/problem+json'],
            example: { ...(problem['application/problem+json']!.example as JsonSchema), detail },
          },
        },
      };
    }
    if (route.body) {
      const name = route.body.name;
      components[name] = inputSchemas[name] ?? { type: 'object' };
      collectRefs(components[name], pending);
    }
    paths[`/api${route.path}`] ??= {};
    usedTags.add(route.tag);
    const isList = JSON.stringify(route.response ?? {}).includes('PageMeta') || JSON.stringify(route.response ?? {}).includes('"meta"');
    const requestContent: JsonSchema | undefined = route.body
      ? { 'application/json': { schema: { $ref: `#/components/schemas/${route.body.name}` } } }
      : undefined;
    if (requestContent) examplesWanted.push(requestContent);
    paths[`/api${route.path}`]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      description: operationDescription(route, isList),
      tags: [route.tag],
      // The token exchange takes an API key only; every other route takes either.
      security: route.operationId === 'createAccessToken' ? [{ apiKey: [] }] : [{ apiKey: [] }, { bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, description: `A ${route.body.name} as JSON`, content: requestContent } }
        : route.rawBody
          ? {
              requestBody: {
                required: true,
                description: route.rawBody.description,
                content: { [route.rawBody.mediaType]: { schema: { type: 'string' }, example: route.rawBody.example } },
              },
            }
          : {}),
      responses,
    };
  }

  while (pending.size > 0) {
    const [name] = pending;
    pending.delete(name!);
    if (components[name!]) continue;
    components[name!] = named[name!] ?? inputSchemas[name!] ?? objectTypeSchema(schema, name!, pending);
    // An input nested two deep (a program's recording's consent) is named only by the input that holds it.
    if (!named[name!] && inputSchemas[name!]) {
      const nested = new Set<string>();
      collectRefs(components[name!]!, nested);
      for (const inner of nested) if (inputSchemas[inner] && !components[inner]) pending.add(inner);
    }
  }
  Object.assign(components, named);
  describeProperties(paths);
  describeProperties(components);
  for (const content of examplesWanted) {
    const media = content['application/json'] as JsonSchema;
    const bodyName = ((media.schema as JsonSchema).$ref as string | undefined)?.split('/').pop();
    media.example = (bodyName && REQUEST_EXAMPLES[bodyName]) ?? exampleOf(media.schema as JsonSchema, components);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Telephony agent gateway',
      version,
      description: 'REST door of the gateway. Every route needs x-api-key or Authorization: Bearer. Errors are RFC 9457 problem details.',
      license: licenseOf(PACKAGE_LICENSE),
      // The document is served by each deployment: whoever runs it (and issued the key) answers for it.
      contact: { name: 'The operator of this gateway, who issued your API key' },
    },
    servers: [{ url: '/', description: 'The gateway that serves this document' }],
    tags: [...usedTags].map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) })),
    paths,
    components: {
      schemas: components,
      headers: HEADERS,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (npm run cli -- keys:create, or POST /api/auth/api-keys)' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token from POST /api/auth/token, valid for its expiresIn seconds' },
      },
    },
  };
}

/**
 * The info object's licence, from package.json: an SPDX identifier as such; UNLICENSED (a private
 * package, no licence granted) by name, with npm's page saying what that word means.
 */
function licenseOf(license: string): JsonSchema {
  if (license === 'UNLICENSED') {
    return { name: 'UNLICENSED (proprietary: no licence is granted)', url: 'https://docs.npmjs.com/cli/v11/configuring-npm/package-json#license' };
  }
  return { name: license, identifier: license };
}

/**
 * What class-validator-jsonschema leaves loose, made exact: whole numbers are integers (@IsInt), a free-form
 * object (@IsObject: metadata, attributes, modelSettings, providerOptions) takes any property, a nested
 * input is a plain $ref, and every property carries the description its @Field gives GraphQL.
 */
function describeInputs(inputSchemas: Record<string, JsonSchema>, schema: GraphQLSchema): void {
  const classes = new Map<string, Function>();
  for (const field of getMetadataStorage().fields) classes.set(field.target.name, field.target);
  for (const [name, component] of Object.entries(inputSchemas)) {
    const target = classes.get(name);
    const graphqlType = schema.getType(name);
    const descriptions: Record<string, string | undefined | null> = isInputObjectType(graphqlType)
      ? Object.fromEntries(Object.values(graphqlType.getFields()).map((field) => [field.name, field.description]))
      : classFieldDescriptions(target);
    // An enum the service checks rather than the input class (the carriers: the gateway's modules) takes its values from the schema's enum.
    const enums: Record<string, string[]> = {};
    if (isInputObjectType(graphqlType)) {
      for (const field of Object.values(graphqlType.getFields())) {
        const type = getNamedType(field.type);
        if (isEnumType(type)) enums[field.name] = type.getValues().map((value) => String(value.value));
      }
    }
    const whole = integerProperties(target);
    for (const [property, propertySchema] of Object.entries((component.properties ?? {}) as Record<string, JsonSchema>)) {
      if (propertySchema.$ref) delete propertySchema.type;
      if (propertySchema.type === 'object' && !propertySchema.$ref && !propertySchema.properties) propertySchema.additionalProperties = true;
      if (whole.has(property)) {
        if (propertySchema.type === 'number') propertySchema.type = 'integer';
        const items = propertySchema.items as JsonSchema | undefined;
        if (items?.type === 'number') items.type = 'integer';
      }
      if (!propertySchema.description && descriptions[property]) propertySchema.description = descriptions[property];
      if (enums[property] && propertySchema.type === 'string' && !propertySchema.enum) propertySchema.enum = enums[property];
    }
  }
}

/**
 * The properties of a class (and its parents) that hold whole numbers: @IsInt, or an Int on GraphQL
 * (`@Field(() => Int)`). class-validator-jsonschema merges @Min/@Max's `type: number` over @IsInt's
 * `integer`, so the type is put right here. (The metadata is the global storage the decorators write to,
 * not a container's.)
 */
function integerProperties(target: Function | undefined): Set<string> {
  const out = new Set<string>();
  if (!target) return out;
  for (const rule of getValidationMetadataStorage().getTargetValidationMetadatas(target, '', true, false)) {
    if (rule.name === 'isInt') out.add(rule.propertyName);
  }
  const chain: Function[] = [];
  for (let current: Function | undefined = target; current && current !== Function.prototype; current = Object.getPrototypeOf(current)) chain.push(current);
  for (const field of getMetadataStorage().fields) {
    if (!chain.includes(field.target)) continue;
    const type = field.getType();
    if (type === Int || (type as { name?: string }).name === 'Int') out.add(field.name);
  }
  return out;
}
