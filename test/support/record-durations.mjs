// Writes test/support/durations.json from a jest --json report of a whole run:
//   npm test -- --json --outputFile=/tmp/run.json
//   node test/support/record-durations.mjs /tmp/run.json
// The sequencer (test/support/sequencer.mjs) starts the slowest files first with it.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const durations = Object.fromEntries(
  report.testResults.map((result) => [fileOf(result.name), Math.round((result.endTime - result.startTime) / 100) / 10]).sort(([a], [b]) => (a < b ? -1 : 1)),
);
/** The path from the repository's root (the report may come from another checkout, such as CI's). */
function fileOf(name) {
  const here = relative(process.cwd(), name);
  return here.startsWith('..') ? name.slice(name.search(/\/(test|src)\//) + 1) : here;
}

writeFileSync(new URL('./durations.json', import.meta.url), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} files`);
