// Writes test/support/durations.json from a jest --json report of a whole run:
//   node --experimental-vm-modules node_modules/jest/bin/jest.js --json --outputFile=/tmp/run.json
//   node test/support/record-durations.mjs /tmp/run.json
// The sequencer (test/support/sequencer.mjs) starts the slowest files first with it.
import { readFileSync, writeFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((result) => [result.name.slice(result.name.search(/\/(test|src)\//) + 1), Math.round((result.endTime - result.startTime) / 100) / 10])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(new URL('./durations.json', import.meta.url), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} files`);
