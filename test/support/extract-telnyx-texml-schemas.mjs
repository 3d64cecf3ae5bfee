#!/usr/bin/env node
// Extracts the parts of Telnyx's published OpenAPI description the loopback Telnyx (fake-telnyx.ts)
// checks TeXML calls against, into test/support/telnyx-texml.schemas.json.
//
//   git clone https://github.com/team-telnyx/openapi /tmp/telnyx-openapi
//   node test/support/extract-telnyx-texml-schemas.mjs /tmp/telnyx-openapi/openapi/spec3.json "$(git -C /tmp/telnyx-openapi rev-parse HEAD)"
//
// Kept, verbatim: the TeXML calls operations (initiate, list, fetch, update), the recording
// resource's (fetch, delete), the parameters they refer to, and the schemas of their bodies and answers.

import { generatedBy, keepOperations, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const script = 'extract-telnyx-texml-schemas.mjs';
const file = 'telnyx-texml.schemas.json';
const { source, commit } = sourceArguments(script, '<team-telnyx/openapi/openapi/spec3.json> <commit of team-telnyx/openapi>');
const spec = await readSpec(source);
const kept = keepOperations(
  spec,
  {
    '/texml/Accounts/{account_sid}/Calls': true,
    '/texml/Accounts/{account_sid}/Calls/{call_sid}': true,
    '/texml/Accounts/{account_sid}/Recordings/{recording_sid}.json': true,
  },
  // In the order found, as the file has always been written.
  { kinds: ['parameters', 'schemas', 'responses', 'requestBodies'], sort: false },
);
const out = {
  $comment: generatedBy(script, file),
  source: {
    repository: 'https://github.com/team-telnyx/openapi',
    commit,
    file: 'openapi/spec3.json',
    openapi: spec.openapi,
    apiVersion: spec.info?.version,
    servers: spec.servers,
  },
  ...kept,
};
writeExtract(file, out);
