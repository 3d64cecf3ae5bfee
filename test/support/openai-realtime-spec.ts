import { readFileSync } from 'node:fs';
import { closeSchemas } from './closed-schema.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// The OpenAI Realtime (GA) events as OpenAI publishes them (test/support/openai-realtime.schemas.json,
// vendored from openai/openai-openapi: see openai-realtime.schemas.md), checked the way the service
// checks them. The published schemas leave objects open (no additionalProperties: false); the
// service refuses a key it does not know (`Unknown parameter: 'session.input_audio_format'`), so
// every schema that lists its properties is closed here, recursively.

type Json = Record<string, unknown>;

interface VendoredSpec {
  source: { repository: string; commit: string };
  components: { schemas: Record<string, Json> };
}

const vendored = JSON.parse(readFileSync(new URL('./openai-realtime.schemas.json', import.meta.url), 'utf8')) as VendoredSpec;

/** Where the schemas come from (repository and commit), for messages. */
export const REALTIME_SPEC_SOURCE = vendored.source;

/** The `type` a referred schema requires, when it names exactly one (`realtime`, `transcription`...). */
function discriminant(branch: unknown): string | null {
  const ref = branch && typeof branch === 'object' ? (branch as Json).$ref : undefined;
  if (typeof ref !== 'string') return null;
  const target = vendored.components.schemas[ref.replace('#/components/schemas/', '')];
  const type = (target?.properties as Record<string, { enum?: unknown[]; const?: unknown }> | undefined)?.type;
  const values = type?.enum ?? (type && 'const' in type ? [type.const] : []);
  return values.length === 1 && typeof values[0] === 'string' ? values[0] : null;
}

/**
 * A `oneOf` of shapes told apart by their `type` (the realtime and the transcription session) is
 * read the way the service reads it: the shape is picked by `type`, and only its errors are told.
 */
function byDiscriminant(branches: unknown[]): Json | null {
  const types = branches.map(discriminant);
  if (types.some((type) => type === null) || new Set(types).size !== types.length) return null;
  let rest: Json = { required: ['type'], properties: { type: { enum: types } } };
  for (const [index, branch] of [...branches.entries()].reverse()) {
    rest = { if: { required: ['type'], properties: { type: { const: types[index] } } }, then: closed(branch), else: rest };
  }
  return rest;
}

/**
 * A `oneOf` of a string and a string of known values (`[{type: string}, {type: string, enum: [...]}]`,
 * the generator's "any string, these suggested": RealtimeResponseCreateParams.conversation's `auto`
 * and `none`) is matched by both for every known value, so as written no known value could pass:
 * it is read as `anyOf`, as the service takes it.
 */
function openString(branches: unknown[]): boolean {
  return branches.length > 1 && branches.every((branch) => branch && typeof branch === 'object' && (branch as Json).type === 'string');
}

/** Closes every schema that lists its properties (closed-schema.ts), picks `oneOf` shapes by `type`, and spells OpenAPI's `nullable` the JSON Schema way. */
function closed(schema: unknown): unknown {
  return closeSchemas(schema, {
    key: (key, value, out) => {
      if (key === 'oneOf' && Array.isArray(value) && openString(value)) {
        out.anyOf = value;
        return true;
      }
      if (key !== 'oneOf' || !Array.isArray(value) || !byDiscriminant(value)) return false;
      out.allOf = [byDiscriminant(value)];
      return true;
    },
    after: (out) => {
      if (out.nullable !== true) return;
      delete out.nullable;
      for (const combinator of ['oneOf', 'anyOf'] as const) {
        if (Array.isArray(out[combinator])) (out[combinator] as unknown[]).push({ type: 'null' });
      }
    },
  });
}

// Formats (uri, unixtime) are not what is checked here: the shapes and the keys are.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
ajv.addSchema({ components: { schemas: closed(vendored.components.schemas) } }, 'openai-realtime');

const compiled = new Map<string, ValidateFunction>();
function validator(schemaName: string): ValidateFunction {
  let validate = compiled.get(schemaName);
  if (!validate) {
    if (!vendored.components.schemas[schemaName]) throw new Error(`${schemaName} is not among the vendored OpenAI Realtime schemas`);
    validate = ajv.compile({ $ref: `openai-realtime#/components/schemas/${schemaName}` });
    compiled.set(schemaName, validate);
  }
  return validate;
}

/** The event schemas of one direction, by event type (`session.update` → RealtimeClientEventSessionUpdate). */
function byType(union: 'RealtimeClientEvent' | 'RealtimeServerEvent'): Map<string, string> {
  const types = new Map<string, string>();
  for (const branch of vendored.components.schemas[union]!.anyOf as { $ref: string }[]) {
    const name = branch.$ref.replace('#/components/schemas/', '');
    const type = (vendored.components.schemas[name]!.properties as Record<string, { enum?: string[] }>).type!.enum![0]!;
    types.set(type, name);
  }
  return types;
}
const CLIENT_EVENTS = byType('RealtimeClientEvent');
const SERVER_EVENTS = byType('RealtimeServerEvent');

export interface SpecProblem {
  /** OpenAI's error code: `unknown_parameter`, `missing_required_parameter`, `invalid_value` or `invalid_event_type`. */
  code: string;
  /** A message in the service's words, e.g. `Unknown parameter: 'session.input_audio_format'.` */
  message: string;
  /** The dotted path of the offending parameter, when there is one. */
  param: string | null;
}

function dotted(instancePath: string, property?: string): string {
  return [
    ...instancePath
      .split('/')
      .filter(Boolean)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')),
    ...(property ? [property] : []),
  ].join('.');
}

/**
 * The most telling of ajv's errors, in the service's words: a missing `type` first (it decides the
 * rest: a session without one matches neither the realtime nor the transcription shape), then an
 * unknown key, then another missing one, then any.
 */
function problem(errors: ErrorObject[]): SpecProblem {
  const noType = errors.find((error) => error.keyword === 'required' && error.params.missingProperty === 'type');
  if (noType) {
    const param = dotted(noType.instancePath, 'type');
    return { code: 'missing_required_parameter', message: `Missing required parameter: '${param}'.`, param };
  }
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  if (unknown) {
    const param = dotted(unknown.instancePath, String(unknown.params.additionalProperty));
    return { code: 'unknown_parameter', message: `Unknown parameter: '${param}'.`, param };
  }
  const missing = errors.find((error) => error.keyword === 'required');
  if (missing) {
    const param = dotted(missing.instancePath, String(missing.params.missingProperty));
    return { code: 'missing_required_parameter', message: `Missing required parameter: '${param}'.`, param };
  }
  const first = errors[0]!;
  const param = dotted(first.instancePath) || null;
  return { code: 'invalid_value', message: `Invalid value${param ? ` for '${param}'` : ''}: ${first.message ?? first.keyword}.`, param };
}

function check(events: Map<string, string>, event: unknown, direction: string): SpecProblem | null {
  const type = event && typeof event === 'object' ? (event as Json).type : undefined;
  const schemaName = typeof type === 'string' ? events.get(type) : undefined;
  if (!schemaName) return { code: 'invalid_event_type', message: `Invalid ${direction} event type: '${String(type)}'.`, param: 'type' };
  const validate = validator(schemaName);
  return validate(event) ? null : problem(validate.errors ?? []);
}

/** Why the service would refuse this event from a client, or null when it is a valid GA client event. */
export function clientEventProblem(event: unknown): SpecProblem | null {
  return check(CLIENT_EVENTS, event, 'client');
}

/** Why this is not a valid GA server event (the double checks what it sends), or null. */
export function serverEventProblem(event: unknown): SpecProblem | null {
  return check(SERVER_EVENTS, event, 'server');
}
