// Jest globalTeardown: which documented REST operations the run never called, and which it called but
// never saw succeed (so their success schema was never held against an answer). A report, not a failure:
// a file run alone calls few operations. The whole list is printed when the run had no path filter.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export default function report(globalConfig) {
  const dir = process.env.OPENAPI_COVERAGE_DIR;
  if (!dir || !existsSync(dir)) return;
  try {
    const documented = existsSync(join(dir, 'operations.json')) ? JSON.parse(readFileSync(join(dir, 'operations.json'), 'utf8')) : [];
    if (documented.length === 0) return;
    const called = new Set();
    const succeeded = new Set();
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.log'))) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const match = /^(\d{3}) (.+)$/.exec(line);
        if (!match) continue;
        called.add(match[2]);
        if (match[1].startsWith('2')) succeeded.add(match[2]);
      }
    }
    const never = documented.filter((key) => !called.has(key));
    const neverSucceeded = documented.filter((key) => called.has(key) && !succeeded.has(key));
    const filtered = (globalConfig.testPathPatterns?.patterns ?? globalConfig.testPathPattern ?? []).length > 0;
    console.log(
      `\nOpenAPI: ${called.size} of ${documented.length} documented operations called, ${succeeded.size} with a success answer checked against its schema.`,
    );
    if (filtered) return;
    if (never.length > 0) console.log(`Never called:\n  ${never.join('\n  ')}`);
    if (neverSucceeded.length > 0) console.log(`Called, never successfully:\n  ${neverSucceeded.join('\n  ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
