#!/usr/bin/env node
// Extracts the ElevenLabs text-to-speech input-streaming WebSocket (`/v1/text-to-speech/{voice_id}/stream-input`)
// from ElevenLabs' published AsyncAPI description into test/support/elevenlabs-stream-input.asyncapi.json,
// for the loopback double (fake-elevenlabs.ts).
//
//   git clone https://github.com/elevenlabs/elevenlabs-docs /tmp/elevenlabs-docs
//   node test/support/extract-elevenlabs-stream-input.mjs /tmp/elevenlabs-docs/fern/apis/api/asyncapi.yml \
//     $(git -C /tmp/elevenlabs-docs log -1 --format=%H -- fern/apis/api/asyncapi.yml)
//
// Kept, verbatim: the channel (its path parameter, its WebSocket binding's query parameters, the
// messages it publishes and subscribes, its examples), those messages, and every schema they refer
// to ($ref closure). The multi-context channel (`multi-stream-input`) is left out. The YAML is read
// with `yaml` (already installed for the GraphQL code generator); the output is JSON so the tests need
// no YAML parser.

import { generatedBy, keepReferred, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const CHANNEL = '/v1/text-to-speech/{voice_id}/stream-input';
const script = 'extract-elevenlabs-stream-input.mjs';
const file = 'elevenlabs-stream-input.asyncapi.json';
const { source, commit } = sourceArguments(script, '<elevenlabs-docs/fern/apis/api/asyncapi.yml> <commit of elevenlabs/elevenlabs-docs>');
const spec = await readSpec(source);
const channel = spec.channels?.[CHANNEL];
if (!channel) throw new Error(`${CHANNEL} is not among the channels`);
const components = keepReferred(spec, [channel], ['messages', 'schemas']);
const out = {
  $comment: generatedBy(script, file),
  source: {
    repository: 'https://github.com/elevenlabs/elevenlabs-docs',
    commit,
    file: 'fern/apis/api/asyncapi.yml',
    asyncapi: spec.asyncapi,
    apiVersion: spec.info?.version,
    license: 'MIT',
  },
  asyncapi: spec.asyncapi,
  info: spec.info,
  channels: { [CHANNEL]: channel },
  components,
};
writeExtract(file, out, {
  summary: `${Object.keys(components.messages).length} messages and ${Object.keys(components.schemas).length} schemas of ${CHANNEL}`,
});
