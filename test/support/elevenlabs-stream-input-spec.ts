import { readFileSync } from 'node:fs';
import { closeSchemas } from './closed-schema.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

// ElevenLabs' input-streaming text-to-speech socket as ElevenLabs publishes it
// (test/support/elevenlabs-stream-input.asyncapi.json, vendored from elevenlabs/elevenlabs-docs: see
// elevenlabs-stream-input.asyncapi.md), checked strictly. The published schemas leave objects open and
// spell some types in Fern's words (`x-fern-type: literal<" ">`, `list<integer>`), which JSON Schema
// does not read: here every object that lists its properties is closed to unknown keys, and Fern's
// types become JSON Schema's, when the file is loaded. The query parameters are checked the same way,
// closed, with their values (strings in a URL) read as the types the binding declares.

type Json = Record<string, unknown>;

export const STREAM_INPUT_CHANNEL = '/v1/text-to-speech/{voice_id}/stream-input';

interface VendoredSpec {
  source: { repository: string; commit: string; file: string };
  channels: Record<string, { bindings: { ws: { query: Json } } }>;
  components: { schemas: Record<string, Json> };
}

const vendored = JSON.parse(readFileSync(new URL('./elevenlabs-stream-input.asyncapi.json', import.meta.url), 'utf8')) as VendoredSpec;

/** Where the description comes from (repository, commit, file), for messages and the double's test. */
export const STREAM_INPUT_SPEC_SOURCE = vendored.source;

/** Fern's `x-fern-type` in JSON Schema's words: `literal<" ">`, `literal<true>`, `list<integer>`, `list<string>`. */
function fernType(type: string): Json {
  const literal = /^literal<(.*)>$/.exec(type);
  if (literal) return { const: JSON.parse(literal[1]!) as unknown };
  const list = /^list<(\w+)>$/.exec(type);
  if (list) return { type: 'array', items: { type: list[1] } };
  throw new Error(`x-fern-type ${type} is not understood here`);
}

/** Closes every schema that lists its properties (closed-schema.ts), and reads Fern's types. */
function closed(schema: unknown): unknown {
  return closeSchemas(schema, {
    key: (key, value, out) => {
      if (key !== 'x-fern-type' || typeof value !== 'string') return false;
      Object.assign(out, fernType(value));
      return true;
    },
  });
}

const schemas = closed(vendored.components.schemas) as Record<string, Json>;
const bodies = new Ajv({ strict: false, allErrors: true, validateSchema: false });
bodies.addSchema({ components: { schemas } }, 'elevenlabs');
// Query values arrive as strings: `auto_mode=true` is the boolean the binding declares.
const queries = new Ajv({ strict: false, allErrors: true, validateSchema: false, coerceTypes: true });
queries.addSchema({ components: { schemas } }, 'elevenlabs');

const compiled = new Map<string, ValidateFunction>();
function validator(schemaName: string): ValidateFunction {
  let validate = compiled.get(schemaName);
  if (!validate) {
    if (!schemas[schemaName]) throw new Error(`${schemaName} is not among the vendored ElevenLabs schemas`);
    validate = bodies.compile({ $ref: `elevenlabs#/components/schemas/${schemaName}` });
    compiled.set(schemaName, validate);
  }
  return validate;
}

const querySchema = closed(vendored.channels[STREAM_INPUT_CHANNEL]!.bindings.ws.query) as Json;
const validateQuery = queries.compile(
  JSON.parse(JSON.stringify(querySchema).replace(/"#\/components\/schemas\//g, '"elevenlabs#/components/schemas/')) as Json,
);

/** The values an enum of the vendored schemas allows (`TextToSpeechOutputFormatEnum` → `ulaw_8000`...). */
export function enumValues(schemaName: string): string[] {
  return (schemas[schemaName]?.enum as string[] | undefined) ?? [];
}

function path(instancePath: string, property?: string): string {
  return [...instancePath.split('/').filter(Boolean), ...(property ? [property] : [])].join('.');
}

/** The most telling of ajv's errors in a sentence: an unknown key first, then a missing one, then a bad value. */
function sentence(errors: ErrorObject[]): string {
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  if (unknown) return `unknown field '${path(unknown.instancePath, String(unknown.params.additionalProperty))}'`;
  const missing = errors.find((error) => error.keyword === 'required');
  if (missing) return `missing field '${path(missing.instancePath, String(missing.params.missingProperty))}'`;
  const first = errors.find((error) => error.keyword === 'enum' || error.keyword === 'const') ?? errors[0]!;
  const allowed =
    first.keyword === 'enum'
      ? ` (one of ${(first.params.allowedValues as unknown[]).join(', ')})`
      : first.keyword === 'const'
        ? ` (must be ${JSON.stringify(first.params.allowedValue)})`
        : '';
  return `invalid value for '${path(first.instancePath) || 'message'}': ${first.message ?? first.keyword}${allowed}`;
}

export type ClientMessageKind = 'InitializeConnection' | 'SendText' | 'CloseConnection';
export type ServerMessageKind = 'AudioOutput' | 'FinalOutput';

/** Why the query of a handshake is not what the binding declares (an unknown parameter, a value not of its enum), or null. */
export function queryProblem(params: URLSearchParams): string | null {
  const query: Json = {};
  for (const [name, value] of params) {
    if (name in query) return `query parameter '${name}' given twice`;
    query[name] = value;
  }
  if (validateQuery(query)) return null;
  const unknown = validateQuery.errors?.find((error) => error.keyword === 'additionalProperties');
  if (unknown) return `unknown query parameter '${String(unknown.params.additionalProperty)}'`;
  return sentence(validateQuery.errors ?? []).replace(/^invalid value for '/, "invalid value for query parameter '");
}

function check(kind: string, message: unknown): string | null {
  const validate = validator(kind);
  return validate(message) ? null : sentence(validate.errors ?? []);
}

/** Why this is not a valid client message of the kind (closed to unknown keys), or null. */
export function clientMessageProblem(kind: ClientMessageKind, message: unknown): string | null {
  return check(kind, message);
}

/** Why this is not a valid server message of the kind (the double checks what it sends), or null. */
export function serverMessageProblem(kind: ServerMessageKind, message: unknown): string | null {
  return check(kind, message);
}
