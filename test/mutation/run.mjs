// npm run test:mutation [-- --json <file>]: Stryker over the modules of stryker.config.mjs, then
// each module's score. Fails when the whole run is under the break threshold (Stryker says so) or
// any one module is. With --json, writes {numPassedTests, numFailedTests} with one "test" per
// module (passed at or over the threshold), the shape .ci/run adds up in its final line.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { BREAK_THRESHOLD } = await import(new URL('../../stryker.config.mjs', import.meta.url).href);
const jsonAt = process.argv.indexOf('--json');
const resultsFile = jsonAt > 0 ? process.argv[jsonAt + 1] : undefined;

// A report left by an earlier run must not stand in for this one.
rmSync(`${root}reports/mutation/mutation.json`, { force: true });
const started = Date.now();
const force = process.argv.includes('--force') ? ['--force'] : [];
const stryker = spawnSync(process.execPath, ['tools/node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'stryker.config.mjs', ...force], {
  cwd: root,
  stdio: 'inherit',
});
const seconds = Math.round((Date.now() - started) / 1000);

let report;
try {
  report = JSON.parse(readFileSync(`${root}reports/mutation/mutation.json`, 'utf8'));
} catch {
  console.log('Mutation testing wrote no report');
  if (resultsFile) writeFileSync(resultsFile, JSON.stringify({ numPassedTests: 0, numFailedTests: 1 }));
  process.exit(1);
}

// Stryker's own score: killed and timed-out mutants over all valid ones (ignored and compile errors left out).
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
let passed = 0;
let failed = 0;
console.log(`\nMutation score per module (break threshold ${BREAK_THRESHOLD} %), ${seconds} s:`);
for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const detected = mutants.filter((mutant) => DETECTED.has(mutant.status)).length;
  const undetected = mutants.filter((mutant) => UNDETECTED.has(mutant.status)).length;
  const ignored = mutants.filter((mutant) => mutant.status === 'Ignored').length;
  const score = detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected);
  const ok = score >= BREAK_THRESHOLD;
  if (ok) passed += 1;
  else failed += 1;
  console.log(
    `${ok ? 'ok  ' : 'LOW '} ${score.toFixed(1).padStart(5)} %  ${String(detected).padStart(3)} killed, ${String(undetected).padStart(2)} survived, ${String(ignored).padStart(2)} marked equivalent  ${file}`,
  );
}
if (stryker.status !== 0) failed += 1; // under the break threshold overall, or Stryker itself failed
console.log(`mutation: ${passed} modules at or over ${BREAK_THRESHOLD} %, ${failed} under${stryker.status !== 0 ? ' (Stryker failed)' : ''}`);
if (resultsFile) writeFileSync(resultsFile, JSON.stringify({ numPassedTests: passed, numFailedTests: failed }));
process.exit(failed === 0 ? 0 : 1);
