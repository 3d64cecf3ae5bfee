// Mutation testing of the pure-logic modules (`npm run test:mutation`): Stryker changes the code
// (a > into >=, a string into "", a branch into nothing...) and runs the unit tests beside it;
// a mutant no test notices is a hole in those tests. Adding a module is one line in MODULES,
// with its tests in src/**/<module>.test.ts.
const MODULES = [
  'src/common/dates.ts',
  'src/common/linear-regexp.ts',
  'src/common/pagination.ts',
  'src/common/tenant-json-schema.ts',
  'src/graphql/cost.ts',
  'src/modules/agents/prompt.ts',
  'src/modules/agents/templates/template-language.ts',
  'src/modules/knowledge/chunk-text.ts',
  'src/modules/knowledge/retrieval.ts',
  'src/modules/models/model-name.ts',
  'src/modules/organizations/roles.ts',
  'src/modules/programs/execution-state.ts',
  'src/modules/programs/runner/auto-pause.ts',
  'src/modules/programs/runner/calling-window.ts',
  'src/modules/programs/runner/waiting.ts',
  'src/modules/programs/triggers/trigger-schedule.ts',
  'src/modules/telephony/call-csv.ts',
  'src/modules/telephony/call-state.ts',
  'src/platform/answer-budget.ts',
  'src/platform/organization-gate.ts',
];

/** The score under which the run fails (and CI with it). */
export const BREAK_THRESHOLD = 90;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: MODULES,
  testRunner: 'jest',
  testRunnerNodeArgs: ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning'],
  jest: { projectType: 'custom', configFile: 'jest.unit.config.mjs', enableFindRelatedTests: true },
  coverageAnalysis: 'perTest',
  // Generous: the machine is shared, and a run slowed by the neighbours must not pass for an endless loop.
  timeoutMS: 10000,
  concurrency: 2,
  thresholds: { high: 95, low: BREAK_THRESHOLD, break: BREAK_THRESHOLD },
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // Incremental: the results of the last run are kept in the repository, and a run tests again only the
  // mutants whose code or covering tests changed since (Stryker compares both), so CI spends seconds on
  // the modules nobody touched. `npm run test:mutation -- --force` tests every mutant again.
  incremental: true,
  incrementalFile: 'test/mutation/incremental.json',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['tools', 'dist', '.data', 'coverage', 'reports', 'test', 'schema', 'migrations'],
};
