import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

// Twilio's CreateCall form body and Recording resource operations as Twilio publishes them
// (test/support/twilio-recordings.schemas.json, vendored from twilio/twilio-oai: see
// twilio-recordings.schemas.md), for the loopback Twilio. A form's values are strings: each is read
// as its schema's type first (a boolean, an array of repeated keys), as Twilio reads them. Twilio
// writes some enums only in a description ("Can be: `mono` or `dual`"); those are enforced too.

type Json = Record<string, any>;

const vendored = JSON.parse(readFileSync(new URL('./twilio-recordings.schemas.json', import.meta.url), 'utf8')) as Json;

/** Where the schemas come from (repository and commit), for messages. */
export const TWILIO_SPEC_SOURCE = vendored.source as { repository: string; commit: string };

const createCall = vendored.paths['/2010-04-01/Accounts/{AccountSid}/Calls.json'].post.requestBody.content['application/x-www-form-urlencoded'].schema as Json;
const recordingPaths = vendored.paths['/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json'] as Json;

/** The values a description lists after "Can be:" (`a`, `b` or `c`), or null when it lists none. */
export function describedEnum(description: string | undefined): string[] | null {
  const listed = /Can be:?\s*((?:`[^`]+`(?:,\s*|\s+or\s+|\s+and\s+|,\s*and\s+|,\s*or\s+)?)+)/.exec(description ?? '');
  return listed ? [...listed[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!) : null;
}

/** The CreateCall properties whose names start with Record (and Trim, which shapes the recording), with their described enums made schema. */
const RECORD_PROPERTIES: Record<string, Json> = Object.fromEntries(
  Object.entries(createCall.properties as Record<string, Json>)
    .filter(([name]) => name.startsWith('Record') || name === 'Trim')
    .map(([name, schema]) => {
      const values = describedEnum(schema.description);
      // A boolean's description lists its two values too ("Can be `true` to record …, or `false`"): only strings and arrays take the list.
      if (!values || schema.enum || schema.type === 'boolean') return [name, schema];
      return [name, schema.type === 'array' ? { ...schema, items: { ...schema.items, enum: values } } : { ...schema, enum: values }];
    }),
);

const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false, validateFormats: false });
const validateRecord: ValidateFunction = ajv.compile({ type: 'object', properties: RECORD_PROPERTIES });

/** The names of the CreateCall parameters about recording that Twilio publishes. */
export const RECORD_PARAMETERS = Object.keys(RECORD_PROPERTIES);

/**
 * Twilio's refusal of a CreateCall form's recording parameters (null: they are valid): each value
 * read as its published type (a boolean from `true`/`false`, an array from repeated keys or spaces).
 */
export function createCallRecordingProblem(form: URLSearchParams): string | null {
  const values: Json = {};
  for (const name of RECORD_PARAMETERS) {
    const all = form.getAll(name);
    if (all.length === 0) continue;
    const schema = RECORD_PROPERTIES[name]!;
    if (schema.type === 'boolean') values[name] = all[0] === 'true' ? true : all[0] === 'false' ? false : all[0];
    else if (schema.type === 'array') values[name] = all.flatMap((value) => value.split(' ').filter(Boolean));
    else values[name] = all[0];
  }
  for (const name of new Set(form.keys())) {
    if (/^Record/.test(name) && !RECORD_PARAMETERS.includes(name)) return `Unknown parameter ${name}`;
  }
  if (validateRecord(values)) return null;
  const error = validateRecord.errors![0]!;
  return `Invalid ${error.instancePath.slice(1).split('/')[0] || 'parameter'}: ${error.message}${error.params && 'allowedValues' in error.params ? ` (${(error.params.allowedValues as string[]).join(', ')})` : ''}`;
}

const sidPattern = (operation: 'get' | 'delete', name: string) =>
  new RegExp((recordingPaths[operation].parameters as Json[]).find((parameter) => parameter.name === name)!.schema.pattern);

/** A Recording Sid as the fetch and delete operations take it (`^RE[0-9a-fA-F]{32}$`). */
export const RECORDING_SID = sidPattern('delete', 'Sid');
/** An Account Sid as they take it. */
export const ACCOUNT_SID = sidPattern('get', 'AccountSid');
/** What a delete answers when it succeeds (the published status). */
export const DELETE_RECORDING_STATUS = Number(Object.keys(recordingPaths.delete.responses)[0]);
/** The statuses a Recording resource can have. */
export const RECORDING_STATUSES = vendored.components.schemas.recording_enum_status.enum as string[];

/** The names of every CreateCall parameter Twilio publishes. */
export const CREATE_CALL_PARAMETERS = Object.keys(createCall.properties as Record<string, Json>);

/**
 * Twilio's refusal of a CreateCall form as a whole (null: it would take it): every parameter one it
 * publishes, the required ones there, and an integer one (Timeout, TimeLimit, …) an integer.
 */
export function createCallFormProblem(form: URLSearchParams): string | null {
  for (const name of new Set(form.keys())) if (!CREATE_CALL_PARAMETERS.includes(name)) return `Unknown parameter ${name}`;
  for (const name of (createCall.required as string[] | undefined) ?? []) if (!form.has(name)) return `Missing required parameter ${name}`;
  for (const [name, schema] of Object.entries(createCall.properties as Record<string, Json>)) {
    const value = form.get(name);
    if (value !== null && schema.type === 'integer' && !/^-?\d+$/.test(value)) return `${name} must be an integer, not ${value}`;
  }
  return null;
}
