#!/usr/bin/env node
// Extracts OpenAI's speech synthesis request (`POST /audio/speech`) and its error answer from
// OpenAI's published OpenAPI description into test/support/openai-speech.schemas.json, for the
// loopback double (fake-openai-speech.ts).
//
//   git clone https://github.com/openai/openai-openapi /tmp/openai-openapi
//   node test/support/extract-openai-speech-schemas.mjs /tmp/openai-openapi/openapi.json $(git -C /tmp/openai-openapi rev-parse HEAD)
//
// Kept: `CreateSpeechRequest` and `ErrorResponse` and everything they refer to ($ref closure),
// verbatim, and the operation's request body (which names CreateSpeechRequest).

import { generatedBy, keepSchemas, openApiSource, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-openai-speech-schemas.mjs';
const file = 'openai-speech.schemas.json';
const { source, commit } = sourceArguments(script, '<openai-openapi/openapi.json> <commit of openai/openai-openapi>');
const spec = await readSpec(source);
const schemas = keepSchemas(spec, ['CreateSpeechRequest', 'ErrorResponse']);
const { requestBody, operationId } = spec.paths['/audio/speech'].post;
const out = {
  $comment: generatedBy(script, file),
  source: openApiSource(spec, { repository: 'https://github.com/openai/openai-openapi', commit, file: 'openapi.json', license: 'MIT' }),
  paths: { '/audio/speech': { post: { operationId, requestBody } } },
  components: { schemas },
};
writeExtract(file, out, { summary: `${Object.keys(schemas).length} schemas` });
