import { readFileSync } from 'node:fs';
import { closeSchemas } from './closed-schema.js';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

// Deepgram's live transcription sockets as Deepgram publishes them: `/v1/listen`
// (test/support/deepgram-listen.asyncapi.json) and Flux's turn-based `/v2/listen`
// (deepgram-listen-v2.asyncapi.json), both vendored from deepgram/deepgram-api-specs (see
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

/** One vendored channel, checked as the double checks it. */
export interface ListenChannelSpec {
  /** Where the description comes from (repository and commit), for messages. */
  source: { repository: string; commit: string };
  /** Every query parameter the channel's bindings list, with its schema (the `$ref` resolved, the binding's default kept). */
  queryParameters: ReadonlyMap<string, Json>;
  /** Why Deepgram would refuse this JSON message from a client, or null when it is one of the channel's client messages. */
  clientMessageProblem(message: unknown): string | null;
  /** Why this is not one of the channel's server messages (the double checks what it sends), or null. */
  serverMessageProblem(message: unknown): string | null;
  /** The JSON client message types the channel lists. */
  clientMessageTypes: readonly string[];
}

function described(errors: ErrorObject[]): string {
  const unknown = errors.find((error) => error.keyword === 'additionalProperties');
  if (unknown)
    return `unknown field '${[unknown.instancePath.replace(/^\//, '').replace(/\//g, '.'), String(unknown.params.additionalProperty)].filter(Boolean).join('.')}'`;
  const first = errors[0]!;
  return `${first.instancePath || 'the message'} ${first.message ?? first.keyword}`;
}

/** Closes every schema that lists its properties (closed-schema.ts). */
const closed = (schema: unknown): unknown => closeSchemas(schema);

function listenChannel(file: string, name: '/v1/listen' | '/v2/listen', prefix: string): ListenChannelSpec {
  const vendored = JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as VendoredAsyncApi;
  const channel = vendored.channels[name]!;
  const resolved = (schema: Json): Json => {
    const ref = schema.$ref;
    if (typeof ref !== 'string') return schema;
    const { $ref: _ref, ...rest } = schema;
    return { ...resolved(vendored.components.schemas[ref.replace('#/components/schemas/', '')]!), ...rest };
  };
  // Formats (double, uuid) are not what is checked: the shapes and the keys are.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
  ajv.addSchema({ components: { schemas: closed(vendored.components.schemas) } }, 'deepgram-listen');
  /** The JSON messages of one direction by their `type` (`KeepAlive` → its payload validator); media is binary and not among them. */
  const byType = (direction: 'client' | 'server'): Map<string, ValidateFunction> => {
    const out = new Map<string, ValidateFunction>();
    for (const [key, message] of Object.entries(vendored.components.messages)) {
      if (!key.includes(`-${direction}-`)) continue;
      const payload = resolved(message.payload);
      if (payload.type !== 'object') continue;
      // The message's name is its `type` less the channel's prefix (ListenV1KeepAlive → KeepAlive).
      const type = message.name.replace(new RegExp(`^${prefix}`), '');
      out.set(type, ajv.compile({ $ref: `deepgram-listen#/components/schemas/${String(message.payload.$ref).replace('#/components/schemas/', '')}` }));
    }
    return out;
  };
  const clientMessages = byType('client');
  const serverMessages = byType('server');
  const check = (messages: Map<string, ValidateFunction>, message: unknown, direction: string): string | null => {
    const type = message && typeof message === 'object' ? (message as Json).type : undefined;
    const validate = typeof type === 'string' ? messages.get(type) : undefined;
    // The control messages of /v1/listen share a schema whose `type` admits all three: the `type` picks the message.
    if (!validate) return `not a ${direction} message of ${name}: type ${JSON.stringify(type)}`;
    return validate(message) ? null : described(validate.errors ?? []);
  };
  return {
    source: vendored.source,
    queryParameters: new Map(Object.entries(channel.bindings.ws.query.properties).map(([parameter, schema]) => [parameter, resolved(schema)])),
    clientMessageProblem: (message) => check(clientMessages, message, 'client'),
    serverMessageProblem: (message) => check(serverMessages, message, 'server'),
    clientMessageTypes: [...clientMessages.keys()],
  };
}

const V1 = listenChannel('./deepgram-listen.asyncapi.json', '/v1/listen', 'ListenV1');
/** Flux (`/v2/listen`): turn-based, its own query and messages (TurnInfo events; no KeepAlive or Finalize). */
export const FLUX_SPEC = listenChannel('./deepgram-listen-v2.asyncapi.json', '/v2/listen', 'ListenV2');

/** Where the description comes from (repository and commit), for messages. */
export const DEEPGRAM_SPEC_SOURCE = V1.source;
/** Every query parameter `/v1/listen`'s bindings list, with its schema. */
export const QUERY_PARAMETERS = V1.queryParameters;
/** Why Deepgram would refuse this JSON message from a client of `/v1/listen`, or null. */
export const clientMessageProblem = V1.clientMessageProblem;
/** Why this is not one of `/v1/listen`'s server messages, or null. */
export const serverMessageProblem = V1.serverMessageProblem;
/** The JSON client message types `/v1/listen` lists (`Finalize`, `CloseStream`, `KeepAlive`). */
export const CLIENT_MESSAGE_TYPES: readonly string[] = V1.clientMessageTypes;
