import { readFileSync } from 'node:fs';
import { closeSchemas } from './closed-schema.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// Deepgram's live transcription socket (`/v1/listen`) as Deepgram publishes it
// (test/support/deepgram-listen.asyncapi.json, vendored from deepgram/deepgram-api-specs: see
// deepgram-listen.asyncapi.md), checked the way the tests' double checks it: the handshake's query
// parameters against the channel's bindings, every JSON message against its message's payload
// schema, closed to unknown keys. The published objects are open (no additionalProperties: false);
// the double refuses a key Deepgram does not list, so a gateway that sends one is caught here
// rather than in production.

type Json = Record<string, unknown>;

interface VendoredAsyncApi {
  source: { repository: string; commit: string };
  channels: Record<string, { bindings: { ws: { query: { properties: Record<string, Json> } } } }>;
  components: { messages: Record<string, { name: string; payload: Json }>; schemas: Record<string, Json> };
}

const vendored = JSON.parse(readFileSync(new URL('./deepgram-listen.asyncapi.json', import.meta.url), 'utf8')) as VendoredAsyncApi;
const channel = vendored.channels['/v1/listen']!;

/** Where the description comes from (repository and commit), for messages. */
export const DEEPGRAM_SPEC_SOURCE = vendored.source;

function resolved(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const { $ref: _ref, ...rest } = schema;
  return { ...resolved(vendored.components.schemas[ref.replace('#/components/schemas/', '')]!), ...rest };
}

/** Every query parameter the channel's bindings list, with its schema (the `$ref` resolved, the binding's default kept). */
export const QUERY_PARAMETERS: ReadonlyMap<string, Json> = new Map(
  Object.entries(channel.bindings.ws.query.properties).map(([name, schema]) => [name, resolved(schema)]),
);

/** Closes every schema that lists its properties (closed-schema.ts). */
const closed = (schema: unknown): unknown => closeSchemas(schema);

// Formats (double, uuid) are not what is checked: the shapes and the keys are.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
ajv.addSchema({ components: { schemas: closed(vendored.components.schemas) } }, 'deepgram-listen');

/** The JSON messages of one direction by their `type` (`KeepAlive` → its payload validator); media is binary and not among them. */
function byType(direction: 'client' | 'server'): Map<string, ValidateFunction> {
  const out = new Map<string, ValidateFunction>();
  for (const [key, message] of Object.entries(vendored.components.messages)) {
    if (!key.includes(`-${direction}-`)) continue;
    const payload = resolved(message.payload);
    if (payload.type !== 'object') continue;
    // The message's name is its `type` less the `ListenV1` prefix (ListenV1KeepAlive → KeepAlive).
    const type = message.name.replace(/^ListenV1/, '');
    out.set(type, ajv.compile({ $ref: `deepgram-listen#/components/schemas/${String(message.payload.$ref).replace('#/components/schemas/', '')}` }));
  }
  return out;
}
const CLIENT_MESSAGES = byType('client');
const SERVER_MESSAGES = byType('server');

function described(errors: ErrorObject[]): string {
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  if (unknown)
    return `unknown field '${[unknown.instancePath.replace(/^\//, '').replace(/\//g, '.'), String(unknown.params.additionalProperty)].filter(Boolean).join('.')}'`;
  const first = errors[0]!;
  return `${first.instancePath || 'the message'} ${first.message ?? first.keyword}`;
}

function check(messages: Map<string, ValidateFunction>, message: unknown, direction: string): string | null {
  const type = message && typeof message === 'object' ? (message as Json).type : undefined;
  const validate = typeof type === 'string' ? messages.get(type) : undefined;
  // The three control messages share a schema whose `type` admits all three: the `type` picks the message.
  if (!validate) return `not a ${direction} message of /v1/listen: type ${JSON.stringify(type)}`;
  return validate(message) ? null : described(validate.errors ?? []);
}

/** Why Deepgram would refuse this JSON message from a client, or null when it is one of the channel's client messages. */
export function clientMessageProblem(message: unknown): string | null {
  return check(CLIENT_MESSAGES, message, 'client');
}

/** Why this is not one of the channel's server messages (the double checks what it sends), or null. */
export function serverMessageProblem(message: unknown): string | null {
  return check(SERVER_MESSAGES, message, 'server');
}

/** The JSON client message types the channel lists (`Finalize`, `CloseStream`, `KeepAlive`). */
export const CLIENT_MESSAGE_TYPES: readonly string[] = [...CLIENT_MESSAGES.keys()];
