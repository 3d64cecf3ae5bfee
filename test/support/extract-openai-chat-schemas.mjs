#!/usr/bin/env node
// Extracts OpenAI's Chat Completions request and response schemas from OpenAI's published OpenAPI
// description into test/support/openai-chat.schemas.json, for the loopback model double
// (test/support/fake-openai-chat.ts), which checks every request the gateway sends against them.
//
//   git clone https://github.com/openai/openai-openapi /tmp/openai-openapi
//   node test/support/extract-openai-chat-schemas.mjs /tmp/openai-openapi/openapi.json $(git -C /tmp/openai-openapi rev-parse HEAD)
//
// Kept: `CreateChatCompletionRequest`, `CreateChatCompletionResponse` and
// `CreateChatCompletionStreamResponse`, and everything they refer to ($ref closure), verbatim.

import { generatedBy, keepSchemas, openApiSource, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-openai-chat-schemas.mjs';
const file = 'openai-chat.schemas.json';
const { source, commit } = sourceArguments(script, '<openai-openapi/openapi.json> <commit of openai/openai-openapi>');
const spec = await readSpec(source);
const roots = ['CreateChatCompletionRequest', 'CreateChatCompletionResponse', 'CreateChatCompletionStreamResponse'];
const schemas = keepSchemas(spec, roots);
const out = {
  $comment: generatedBy(script, file),
  source: openApiSource(spec, { repository: 'https://github.com/openai/openai-openapi', commit, file: 'openapi.json', license: 'MIT' }),
  components: { schemas },
};
writeExtract(file, out, { summary: `${Object.keys(schemas).length} schemas (${roots.length} events)` });
