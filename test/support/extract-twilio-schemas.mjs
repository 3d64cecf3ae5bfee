#!/usr/bin/env node
// Extracts the parts of Twilio's published OpenAPI description (REST API v2010) the loopback Twilio
// (fake-twilio.ts) checks requests against, into test/support/twilio-calls.schemas.json and
// test/support/twilio-recordings.schemas.json.
//
//   git clone --depth 1 https://github.com/twilio/twilio-oai /tmp/twilio-oai
//   node test/support/extract-twilio-schemas.mjs /tmp/twilio-oai/spec/json/twilio_api_v2010.json "$(git -C /tmp/twilio-oai rev-parse HEAD)"
//
// Kept, verbatim, with the schemas they refer to:
// - twilio-calls: the UpdateCall operation (`POST /Calls/{Sid}.json`: its path parameters and form
//   body, `UpdateCallRequest`);
// - twilio-recordings: the CreateCall operation's form body (`CreateCallRequest`), the Recording
//   resource's fetch parameters and delete operation (`/Recordings/{Sid}.json`), and the schemas
//   the recording resource's status and source refer to.

import { generatedBy, keepOperations, openApiSource, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-twilio-schemas.mjs';
const { source, commit } = sourceArguments(script, '<twilio-oai/spec/json/twilio_api_v2010.json> <commit of twilio/twilio-oai>');
const spec = await readSpec(source);
const origin = openApiSource(spec, { repository: 'https://github.com/twilio/twilio-oai', commit, file: 'spec/json/twilio_api_v2010.json', license: 'MIT' });
const files = {
  'twilio-calls.schemas.json': keepOperations(spec, {
    '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json': { post: ['operationId', 'parameters', 'requestBody'] },
  }),
  'twilio-recordings.schemas.json': keepOperations(
    spec,
    {
      '/2010-04-01/Accounts/{AccountSid}/Calls.json': { post: ['operationId', 'requestBody'] },
      '/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json': { get: ['operationId', 'parameters'], delete: true },
    },
    { schemas: ['recording_enum_status', 'recording_enum_source'], sort: false },
  ),
};
for (const [file, kept] of Object.entries(files)) writeExtract(file, { $comment: generatedBy(script, file), source: origin, ...kept });
