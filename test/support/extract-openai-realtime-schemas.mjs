#!/usr/bin/env node
// Extracts the OpenAI Realtime (GA) event schemas from OpenAI's published OpenAPI description into
// test/support/openai-realtime.schemas.json, for the loopback double (fake-openai-realtime.ts).
//
//   git clone https://github.com/openai/openai-openapi /tmp/openai-openapi
//   node test/support/extract-openai-realtime-schemas.mjs /tmp/openai-openapi/openapi.json $(git -C /tmp/openai-openapi rev-parse HEAD)
//
// Kept: every `RealtimeClientEvent*` and `RealtimeServerEvent*` schema and everything they refer to
// ($ref closure), verbatim. The beta (`RealtimeBeta*`) and translation events are left out.

import { generatedBy, keepSchemas, openApiSource, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-openai-realtime-schemas.mjs';
const file = 'openai-realtime.schemas.json';
const { source, commit } = sourceArguments(script, '<openai-openapi/openapi.json> <commit of openai/openai-openapi>');
const spec = await readSpec(source);
const roots = Object.keys(spec.components.schemas).filter((name) => /^Realtime(Client|Server)Event/.test(name));
const schemas = keepSchemas(spec, roots);
const out = {
  $comment: generatedBy(script, file),
  source: openApiSource(spec, { repository: 'https://github.com/openai/openai-openapi', commit, file: 'openapi.json', license: 'MIT' }),
  components: { schemas },
};
writeExtract(file, out, { summary: `${Object.keys(schemas).length} schemas (${roots.length} events)` });
