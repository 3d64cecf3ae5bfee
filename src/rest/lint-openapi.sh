#!/usr/bin/env bash
# npm run lint:openapi: writes sdk/openapi.json from the code, then lints it with Redocly's recommended
# ruleset and Spectral's spectral:oas (plus our description rules); any warning fails. Both run offline,
# from tools/ (their own install: npm run lint:openapi installs it on first use).
set -euo pipefail
cd "$(dirname "$0")/../.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
node src/build-if-stale.mjs
node dist/src/print-openapi.js
# Redocly exits non-zero on errors only: its JSON report's totals count the warnings too.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
tools/node_modules/.bin/redocly lint sdk/openapi.json --config redocly.yaml --format json --max-problems 1000 >"$report" 2>/dev/null || true
node -e '
  const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  for (const problem of report.problems ?? []) {
    const where = problem.location?.[0]?.pointer ?? "";
    console.log(`redocly ${problem.severity} ${problem.ruleId}: ${problem.message} ${where}`);
  }
  const { errors = 0, warnings = 0 } = report.totals ?? {};
  console.log(`Redocly (recommended): ${errors} errors, ${warnings} warnings`);
  process.exit(report.totals && errors + warnings === 0 ? 0 : 1);
' "$report"
tools/node_modules/.bin/spectral lint sdk/openapi.json --ruleset .spectral.yaml --fail-severity warn --display-only-failures
