import { readFileSync } from 'node:fs';
import { closeSchemas } from './closed-schema.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// OpenAI's speech synthesis request (`POST /audio/speech`, `CreateSpeechRequest`) and its error
// answer (`ErrorResponse`) as OpenAI publishes them (test/support/openai-speech.schemas.json,
// vendored from openai/openai-openapi: see openai-speech.schemas.md), checked the way the service
// checks them. The request is published closed (`additionalProperties: false`); every other object
// that lists its properties is closed here too, as the service refuses what it does not know.

type Json = Record<string, unknown>;

interface VendoredSpec {
  source: { repository: string; commit: string };
  components: { schemas: Record<string, Json> };
}

const vendored = JSON.parse(readFileSync(new URL('./openai-speech.schemas.json', import.meta.url), 'utf8')) as VendoredSpec;

/** Where the schemas come from (repository and commit), for messages. */
export const SPEECH_SPEC_SOURCE = vendored.source;

/** Closes every schema that lists its properties (closed-schema.ts). */
const closed = (schema: unknown): unknown => closeSchemas(schema);

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
ajv.addSchema({ components: { schemas: closed(vendored.components.schemas) } }, 'openai-speech');
const compiled = new Map<string, ValidateFunction>();
function validator(name: 'CreateSpeechRequest' | 'ErrorResponse'): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) compiled.set(name, (validate = ajv.compile({ $ref: `openai-speech#/components/schemas/${name}` })));
  return validate;
}

/** A refusal in the shape of OpenAI's error JSON (`{"error": {...}}`). */
export interface OpenAiError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

function dotted(instancePath: string, property?: string): string {
  return [...instancePath.split('/').filter(Boolean), ...(property ? [property] : [])].join('.');
}

/** The most telling of ajv's errors, in the REST API's words: an unknown key first, then a missing one, then any. */
function problem(errors: ErrorObject[]): OpenAiError {
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  if (unknown) {
    const param = dotted(unknown.instancePath, String(unknown.params.additionalProperty));
    return { message: `Unrecognized request argument supplied: ${param}`, type: 'invalid_request_error', param: null, code: null };
  }
  const missing = errors.find((error) => error.keyword === 'required');
  if (missing) {
    const param = dotted(missing.instancePath, String(missing.params.missingProperty));
    return { message: `Missing required parameter: '${param}'.`, type: 'invalid_request_error', param, code: 'missing_required_parameter' };
  }
  const first = errors[0]!;
  const param = dotted(first.instancePath) || null;
  return {
    message: `Invalid value${param ? ` for '${param}'` : ''}: ${first.message ?? first.keyword}.`,
    type: 'invalid_request_error',
    param,
    code: 'invalid_value',
  };
}

/** Why the service would refuse this request body, or null when it is a valid `CreateSpeechRequest`. */
export function speechRequestProblem(body: unknown): OpenAiError | null {
  const validate = validator('CreateSpeechRequest');
  return validate(body) ? null : problem(validate.errors ?? []);
}

/** Why this is not OpenAI's error JSON (the double checks what it answers), or null. */
export function errorResponseProblem(body: unknown): string | null {
  const validate = validator('ErrorResponse');
  return validate(body) ? null : ajv.errorsText(validate.errors);
}
