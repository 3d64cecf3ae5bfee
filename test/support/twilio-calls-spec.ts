import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { describedEnum } from './twilio-recordings-spec.js';

// What Twilio publishes of machine detection on CreateCall (twilio-recordings.schemas.json keeps the
// whole CreateCall form) and of UpdateCall (twilio-calls.schemas.json, vendored from twilio/twilio-oai:
// see twilio-calls.schemas.md), for the loopback Twilio. Form values are strings, read as their
// published type; enums Twilio writes only in a description ("Can be: `true` or `false`") are enforced.

type Json = Record<string, any>;

const load = (name: string) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as Json;
const form = (operation: Json) => operation.requestBody.content['application/x-www-form-urlencoded'].schema as Json;
const calls = load('./twilio-calls.schemas.json');
const createCall = form(load('./twilio-recordings.schemas.json').paths['/2010-04-01/Accounts/{AccountSid}/Calls.json'].post);
const updateCall = calls.paths['/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json'].post as Json;

/** A property's schema with an enum its description lists made schema, and a `$ref` to a vendored component followed. */
function enforced(schema: Json): Json {
  if (schema.$ref) return calls.components.schemas[String(schema.$ref).split('/').pop()!] as Json;
  const values = describedEnum(schema.description);
  return values && !schema.enum && schema.type === 'string' ? { ...schema, enum: values } : schema;
}

const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false, validateFormats: false });

/** A validator of a form's values, each read as its schema's type (an integer from its digits). */
function formChecker(properties: Record<string, Json>) {
  const validate: ValidateFunction = ajv.compile({ type: 'object', properties, additionalProperties: false });
  return (values: Record<string, string>): string | null => {
    const typed: Json = {};
    for (const [name, value] of Object.entries(values)) {
      const schema = properties[name];
      if (!schema) return `Unknown parameter ${name}`;
      typed[name] = schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    }
    if (validate(typed)) return null;
    const error = validate.errors![0]!;
    return `Invalid ${error.instancePath.slice(1) || 'parameter'}: ${error.message}${error.params && 'allowedValues' in error.params ? ` (${(error.params.allowedValues as string[]).join(', ')})` : ''}`;
  };
}

const DETECTION_PROPERTIES = Object.fromEntries(
  Object.entries(createCall.properties as Record<string, Json>)
    .filter(([name]) => name.startsWith('MachineDetection') || name.startsWith('AsyncAmd'))
    .map(([name, schema]) => [name, enforced(schema)]),
);
const checkDetection = formChecker(DETECTION_PROPERTIES);

/** The names of CreateCall's machine-detection parameters, as Twilio publishes them. */
export const DETECTION_PARAMETERS = Object.keys(DETECTION_PROPERTIES);

/** Twilio's refusal of a CreateCall form's machine-detection parameters (null: valid, or none sent). */
export function createCallDetectionProblem(body: URLSearchParams): string | null {
  const values: Record<string, string> = {};
  for (const name of new Set(body.keys())) {
    if (/^(MachineDetection|AsyncAmd)/.test(name)) values[name] = body.get(name)!;
  }
  const problem = checkDetection(values);
  if (problem) return problem;
  if (values.AsyncAmd === 'true' && !values.MachineDetection) return 'AsyncAmd needs MachineDetection';
  return null;
}

const UPDATE_PROPERTIES = Object.fromEntries(
  Object.entries(form(updateCall).properties as Record<string, Json>).map(([name, schema]) => [name, enforced(schema)]),
);
const checkUpdate = formChecker(UPDATE_PROPERTIES);

/** A Call Sid as UpdateCall takes it (`^CA[0-9a-fA-F]{32}$`). */
export const CALL_SID = new RegExp((updateCall.parameters as Json[]).find((parameter) => parameter.name === 'Sid')!.schema.pattern);

/** Twilio's refusal of an UpdateCall form (null: valid): only published fields, of their types; Twiml and Url are exclusive. */
export function updateCallProblem(body: URLSearchParams): string | null {
  const values = Object.fromEntries(body);
  const problem = checkUpdate(values);
  if (problem) return problem;
  if (values.Twiml !== undefined && values.Url !== undefined) return 'Twiml and Url are mutually exclusive';
  if (values.Twiml === undefined && values.Url === undefined && values.Status === undefined) return 'Nothing to update: Url, Twiml or Status';
  return null;
}
