// `npm test`: the suite without its end-to-end tier (test/support/tiers.mjs), so the README's test
// command stays a few minutes on a busy 2-core laptop. `npm run test:all` (and CI) run every file
// with the config in package.json; `npm run test:suite -- <file>` runs any one file.
import { readFileSync } from 'node:fs';
import { END_TO_END } from './test/support/tiers.mjs';

const { jest } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default {
  ...jest,
  rootDir: '.',
  testPathIgnorePatterns: ['/node_modules/', ...END_TO_END.map((path) => `<rootDir>/${path.replaceAll('.', '\\.')}$`)],
};
