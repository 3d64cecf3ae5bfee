// Keeps the part of the Model Context Protocol's JSON Schema the MCP double checks the gateway's
// messages against: the client's requests and notifications a tool session sends, and every
// definition they refer to, verbatim. Usage:
//   node test/support/extract-mcp-schemas.mjs <schema.json> <repository commit> <version>
import { keepReferred, readSpec, sourceArguments, writeExtract } from './spec-extract.mjs';

const { source, commit, rest } = sourceArguments('extract-mcp-schemas.mjs', '<schema.json> <commit of modelcontextprotocol/modelcontextprotocol> <version>');
const [version] = rest;
const schema = await readSpec(source);
const roots = ['InitializeRequest', 'InitializedNotification', 'ListToolsRequest', 'CallToolRequest', 'PingRequest', 'CancelledNotification'];
const { $defs } = keepReferred(
  schema,
  roots.map((name) => ({ $ref: `#/$defs/${name}` })),
  ['$defs'],
);
const out = {
  source: {
    repository: 'modelcontextprotocol/modelcontextprotocol',
    path: `schema/${version}/schema.json`,
    commit,
    license: 'MIT, in transition to Apache-2.0 (the repository LICENSE)',
  },
  $schema: schema.$schema,
  roots,
  $defs,
};
writeExtract('mcp.schemas.json', out, { indent: 2, summary: `${Object.keys($defs).length} definitions` });
