// Jest globalSetup: a fresh folder where every worker notes the documented operations its REST
// answers came from (test/helpers/clients.ts → OpenApiContract.record); openapi-coverage-report.mjs reads it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup() {
  // Set before the workers start, so they inherit it.
  process.env.OPENAPI_COVERAGE_DIR = mkdtempSync(join(tmpdir(), 'openapi-coverage-'));
}
