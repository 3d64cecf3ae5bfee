// The fast unit tests: pure modules and the *.test.ts beside them under src/, no app, no database.
// `npm run test:unit` runs them; Stryker (stryker.config.mjs) runs only these for every mutant.
import { readFileSync } from 'node:fs';

// Not the suite's sequencer (slowest first by recorded durations): these files take a tenth of a second each.
// Nor its OpenAPI coverage report (global setup and teardown), nor the report of waits still running
// after a test (setupFilesAfterEnv): unit tests call no route and wait for nothing, and Stryker's
// sandbox leaves test/ out.
const { testSequencer, globalSetup, globalTeardown, setupFilesAfterEnv, ...jest } = JSON.parse(
  readFileSync(new URL('./package.json', import.meta.url), 'utf8'),
).jest;

export default {
  ...jest,
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.test.ts'],
  testTimeout: 10000,
  // Stryker's sandbox copies the project under .stryker-tmp: not a second package to jest.
  modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp/'],
};
