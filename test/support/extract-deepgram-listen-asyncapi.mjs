#!/usr/bin/env node
// Extracts Deepgram's live transcription socket (the `/v1/listen` channel) from Deepgram's published
// AsyncAPI description into test/support/deepgram-listen.asyncapi.json, for the loopback double
// (fake-deepgram.ts, through deepgram-listen-spec.ts).
//
//   git clone https://github.com/deepgram/deepgram-api-specs /tmp/deepgram-api-specs
//   node test/support/extract-deepgram-listen-asyncapi.mjs /tmp/deepgram-api-specs/asyncapi.yml $(git -C /tmp/deepgram-api-specs rev-parse HEAD)
//   node test/support/extract-deepgram-listen-asyncapi.mjs /tmp/deepgram-api-specs/asyncapi.yml $(git -C /tmp/deepgram-api-specs rev-parse HEAD) /v2/listen
//
// The third argument picks the channel: `/v1/listen` (the default) is written to
// deepgram-listen.asyncapi.json, `/v2/listen` (Flux, turn-based) to deepgram-listen-v2.asyncapi.json.
//
// Kept: the channel's handshake bindings (query parameters with their schemas and defaults, the
// headers), its client messages (binary media; Finalize, CloseStream, KeepAlive) and server messages
// (Results, Metadata, UtteranceEnd, SpeechStarted), and every schema they refer to ($ref closure),
// verbatim. The other channels (the agent, /v2/listen, speak) are left out.
//
// The YAML is read with `yaml`, which is in node_modules through the dev tools (@graphql-codegen/cli);
// the gateway itself does not depend on it, and the tests read only the JSON this writes.

import { generatedBy, keepReferred, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-deepgram-listen-asyncapi.mjs';
const FILES = { '/v1/listen': 'deepgram-listen.asyncapi.json', '/v2/listen': 'deepgram-listen-v2.asyncapi.json' };
const { source, commit, rest } = sourceArguments(script, '<deepgram-api-specs/asyncapi.yml> <commit of deepgram/deepgram-api-specs> [/v1/listen | /v2/listen]');
const [CHANNEL = '/v1/listen'] = rest;
const file = FILES[CHANNEL];
if (!file) {
  console.error(`the channel is one of ${Object.keys(FILES).join(', ')}`);
  process.exit(2);
}
const spec = await readSpec(source);
const channel = spec.channels?.[CHANNEL];
if (!channel) throw new Error(`${CHANNEL} is not a channel of ${source}`);
const components = keepReferred(spec, [channel], ['messages', 'schemas']);
const out = {
  $comment: generatedBy(script, FILES['/v1/listen']),
  source: { repository: 'https://github.com/deepgram/deepgram-api-specs', commit, file: 'asyncapi.yml', asyncapi: spec.asyncapi, license: 'CC-BY-4.0' },
  servers: spec.servers,
  channels: { [CHANNEL]: channel },
  components,
};
writeExtract(file, out, {
  summary: `${Object.keys(components.messages).length} messages and ${Object.keys(components.schemas).length} schemas of ${CHANNEL}`,
});
