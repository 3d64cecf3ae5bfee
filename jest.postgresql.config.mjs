// CI's PostgreSQL pass (`npm run test:postgresql`, with TEST_DATABASE_URL): every file but those whose
// subject is the same on either database (test/support/tiers.mjs, DATABASE_NEUTRAL), which the PGlite
// pass has just run.
import { readFileSync } from 'node:fs';
import { DATABASE_NEUTRAL } from './test/support/tiers.mjs';

const { jest } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default {
  ...jest,
  rootDir: '.',
  testPathIgnorePatterns: ['/node_modules/', ...DATABASE_NEUTRAL.map((path) => `<rootDir>/${path.replaceAll('.', '\\.')}${path.endsWith('/') ? '' : '$'}`)],
};
