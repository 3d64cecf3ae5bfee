// Keeps the part of the Model Context Protocol's JSON Schema the MCP double checks the gateway's
// messages against: the client's requests and notifications a tool session sends, and every
// definition they refer to, verbatim. Usage:
//   node test/support/extract-mcp-schemas.mjs <schema.json> <repository commit> <version>
import { readFileSync, writeFileSync } from 'node:fs';

const [file, commit, version] = process.argv.slice(2);
const schema = JSON.parse(readFileSync(file, 'utf8'));
const roots = ['InitializeRequest', 'InitializedNotification', 'ListToolsRequest', 'CallToolRequest', 'PingRequest', 'CancelledNotification'];
const kept = {};
const visit = (name) => {
  if (kept[name]) return;
  const definition = schema.$defs[name];
  if (!definition) throw new Error(`no definition ${name}`);
  kept[name] = definition;
  JSON.stringify(definition).replace(/"#\/\$defs\/([A-Za-z0-9_]+)"/g, (_match, inner) => {
    visit(inner);
    return '';
  });
};
roots.forEach(visit);
const out = {
  source: {
    repository: 'modelcontextprotocol/modelcontextprotocol',
    path: `schema/${version}/schema.json`,
    commit,
    license: 'MIT, in transition to Apache-2.0 (the repository LICENSE)',
  },
  $schema: schema.$schema,
  roots,
  $defs: Object.fromEntries(
    Object.keys(kept)
      .sort()
      .map((name) => [name, kept[name]]),
  ),
};
writeFileSync(new URL('./mcp.schemas.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log(`kept ${Object.keys(kept).length} definitions`);
