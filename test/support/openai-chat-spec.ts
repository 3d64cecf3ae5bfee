import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { closeSchemas } from './closed-schema.js';

// OpenAI's Chat Completions request and response as OpenAI publishes them (test/support/openai-chat.schemas.json,
// vendored from openai/openai-openapi: see openai-chat.schemas.md), checked the way the service checks a
// request: an unknown key is refused. The published request is an `allOf` of shared model properties and
// its own; each is merged into one object before objects are closed, so a key of either part is known.

type Json = Record<string, unknown>;

const vendored = JSON.parse(readFileSync(new URL('./openai-chat.schemas.json', import.meta.url), 'utf8')) as {
  source: Json;
  components: { schemas: Record<string, Json> };
};

/** Where the schemas come from (repository and commit), for messages. */
export const CHAT_SPEC_SOURCE = vendored.source;

const schemas = vendored.components.schemas;
const refName = (ref: unknown) => (typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : null);

/** An `allOf` of object schemas (referred to or written out) as one object: their properties and required keys together. */
function merged(schema: Json): Json | null {
  const parts = (schema.allOf as Json[]).map((part) => (part.$ref ? schemas[refName(part.$ref)!]! : part));
  const flat = parts.map((part) => (Array.isArray(part.allOf) ? merged(part) : part));
  if (flat.some((part) => !part || (part.type !== undefined && part.type !== 'object') || part.oneOf || part.anyOf)) return null;
  const { allOf: _allOf, ...rest } = schema;
  return {
    ...rest,
    type: 'object',
    properties: Object.assign({}, ...flat.map((part) => (part!.properties as Json | undefined) ?? {})),
    required: [...new Set(flat.flatMap((part) => (part!.required as string[] | undefined) ?? []))],
  };
}

function flattened(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(flattened);
  if (!schema || typeof schema !== 'object') return schema;
  const object = schema as Json;
  const flat = Array.isArray(object.allOf) ? (merged(object) ?? object) : object;
  return Object.fromEntries(
    Object.entries(flat).map(([key, value]) => [
      key,
      key === 'properties' && value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value as Json).map(([name, inner]) => [name, flattened(inner)]))
        : flattened(value),
    ]),
  );
}

/** OpenAPI's `nullable` spelled the JSON Schema way: null joins the type, the enum or the alternatives. */
function nullable(out: Json): void {
  if (out.nullable !== true) return;
  delete out.nullable;
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  for (const combinator of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(out[combinator])) (out[combinator] as unknown[]).push({ type: 'null' });
  }
  if (typeof out.$ref === 'string') {
    out.anyOf = [{ $ref: out.$ref }, { type: 'null' }];
    delete out.$ref;
  }
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false, validateFormats: false });
ajv.addSchema({ components: { schemas: closeSchemas(flattened(schemas), { after: nullable }) as Json } }, 'openai-chat');
const compiled = new Map<string, ValidateFunction>();

function problem(name: string, value: unknown): string | null {
  let validate = compiled.get(name);
  if (!validate) compiled.set(name, (validate = ajv.compile({ $ref: `openai-chat#/components/schemas/${name}` })));
  if (validate(value)) return null;
  const [first] = validate.errors ?? [];
  const extra = first?.keyword === 'additionalProperties' ? ` '${String(first.params.additionalProperty)}'` : '';
  return `${name}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}${extra}`;
}

/** Why OpenAI would refuse this request body (an unknown key among them), or null. */
export const chatRequestProblem = (body: unknown) => problem('CreateChatCompletionRequest', body);
/** Why this is not a response OpenAI sends, or null (the double's own answers). */
export const chatResponseProblem = (body: unknown) => problem('CreateChatCompletionResponse', body);
/** Why this is not a chunk of a streamed response OpenAI sends, or null (the double's own `stream: true` answers). */
export const chatStreamChunkProblem = (body: unknown) => problem('CreateChatCompletionStreamResponse', body);
