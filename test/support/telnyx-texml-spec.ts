import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

// Telnyx's TeXML calls operations as Telnyx publishes them (test/support/telnyx-texml.schemas.json,
// vendored from team-telnyx/openapi: see telnyx-texml.schemas.md), for the loopback Telnyx. Bodies
// are closed (a property the schema does not name is refused, as Telnyx refuses a parameter it
// does not know); a space-separated StatusCallbackEvent is read word by word, as its description says.

type Json = Record<string, any>;

const vendored = JSON.parse(readFileSync(new URL('./telnyx-texml.schemas.json', import.meta.url), 'utf8')) as Json;

export const TELNYX_SPEC_SOURCE = vendored.source as { repository: string; commit: string };

const schemas = vendored.components.schemas as Json;
const parameters = vendored.components.parameters as Json;
const CALLS = '/texml/Accounts/{account_sid}/Calls';

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
// Each validator carries the vendored components, so the description's own `#/components/…` references resolve.
const compile = (schema: Json): ValidateFunction => ajv.compile({ ...schema, components: { schemas } });
const closed = (name: string): ValidateFunction => compile({ ...schemas[name], additionalProperties: false });
const validateInitiate = closed('InitiateCallRequest');
const validateUpdate = closed('UpdateCallRequest');
const validateCallResource = compile({ $ref: '#/components/schemas/CallResource' });
const validateCallIndex = compile({ $ref: '#/components/schemas/CallResourceIndex' });
const validateInitiateResult = compile({ $ref: '#/components/schemas/InitiateCallResult' });
const validateRecording = compile({ $ref: '#/components/schemas/TexmlGetCallRecordingResponseBody' });
const RECORDING = '/texml/Accounts/{account_sid}/Recordings/{recording_sid}.json';

const problems = (validate: ValidateFunction) =>
  (validate.errors ?? [])
    .map(
      (error) =>
        `${error.instancePath || '/'} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`,
    )
    .join('; ');

/** Why Telnyx would refuse an InitiateTexmlCall JSON body (null: it is valid). */
export function initiateCallProblem(body: unknown): string | null {
  if (!body || typeof body !== 'object') return 'the body is not a JSON object';
  const events = (body as Json).StatusCallbackEvent;
  const checked = typeof events === 'string' ? { ...(body as Json), StatusCallbackEvent: undefined } : body;
  if (typeof events === 'string') {
    const allowed = schemas.InitiateCallRequest.properties.StatusCallbackEvent.enum as string[];
    const unknown = events.split(' ').filter((word) => !allowed.includes(word));
    if (unknown.length > 0 || events.trim() === '') return `/StatusCallbackEvent must be words of ${allowed.join(', ')}`;
    delete (checked as Json).StatusCallbackEvent;
  }
  // RecordingStatusCallbackEvent is published as a string whose description names its words: "in-progress, completed and absent", space-separated.
  const recordingEvents = (body as Json).RecordingStatusCallbackEvent;
  if (typeof recordingEvents === 'string' && recordingEvents.split(' ').some((word) => !['in-progress', 'completed', 'absent'].includes(word)))
    return '/RecordingStatusCallbackEvent must be words of in-progress, completed, absent';
  return validateInitiate(checked) ? null : problems(validateInitiate);
}

/** Why Telnyx would refuse an UpdateTexmlCall form (null: it is valid). */
export function updateCallProblem(form: URLSearchParams): string | null {
  const body = Object.fromEntries(form.entries());
  return validateUpdate(body) ? null : problems(validateUpdate);
}

/** Why Telnyx would refuse the query of GetTexmlCalls: a parameter it does not publish (null: none). */
export function listCallsProblem(query: URLSearchParams): string | null {
  const published = (vendored.paths[CALLS].get.parameters as { $ref: string }[])
    .map((parameter) => parameters[parameter.$ref.split('/').pop()!])
    .filter((parameter) => parameter.in === 'query')
    .map((parameter) => parameter.name as string);
  const unknown = [...new Set(query.keys())].filter((name) => !published.includes(name));
  return unknown.length > 0 ? `unknown query parameters: ${unknown.join(', ')}` : null;
}

/**
 * Why Telnyx would refuse a request on a recording resource (GetTeXMLCallRecording, DeleteTeXMLCallRecording):
 * a method it does not publish there, a query parameter (it publishes none), a recording_sid that is not a uuid (null: none).
 */
export function recordingRequestProblem(method: string, recordingSid: string, query: URLSearchParams): string | null {
  const operation = vendored.paths[RECORDING][method.toLowerCase()] as Json | undefined;
  if (!operation) return `${method} is not published for ${RECORDING}`;
  const unknown = [...new Set(query.keys())];
  if (unknown.length > 0) return `unknown query parameters: ${unknown.join(', ')}`;
  const sid = (operation.parameters as { $ref: string }[])
    .map((parameter) => parameters[parameter.$ref.split('/').pop()!])
    .find((each) => each.name === 'recording_sid');
  if (sid?.schema?.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(recordingSid))
    return '/recording_sid must be a uuid';
  return null;
}

/** Our own answers are held to the published shapes too, so the double cannot drift from Telnyx's. */
export function answerProblem(kind: 'call' | 'calls' | 'initiated' | 'recording', body: unknown): string | null {
  const validate =
    kind === 'call' ? validateCallResource : kind === 'calls' ? validateCallIndex : kind === 'recording' ? validateRecording : validateInitiateResult;
  return validate(body) ? null : problems(validate);
}
