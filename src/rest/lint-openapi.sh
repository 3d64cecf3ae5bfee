#!/usr/bin/env bash
# npm run lint:openapi: writes sdk/openapi.json from the code, then lints it with Redocly's recommended
# ruleset and Spectral's spectral:oas (plus our description rules); any warning fails. Both run offline.
set -euo pipefail
cd "$(dirname "$0")/../.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
node src/build-if-stale.mjs
node dist/src/print-openapi.js
redocly lint sdk/openapi.json --config redocly.yaml --max-problems 50
spectral lint sdk/openapi.json --ruleset .spectral.yaml --fail-severity warn --display-only-failures
