#!/usr/bin/env bash
# The whole test suite: installs what the tests need (when missing), lints, builds, runs every test file.
# Usage: npm test            (all tests)
#        npm test -- FILE... (only these files)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
npm run --silent lint            # Biome (biome.jsonc): its rules and the format; a finding fails the suite
npm run --silent build           # node scripts/build.mjs: tsc with the type check; stamps dist/ for npm start and npm pack
npx tsc -p tsconfig.check.json   # tests, tools and benches are type-checked too
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
echo "running ${#files[@]} test files"
# TAP as before on stdout; the failed tests named again at the very end (CI keeps a log's tail).
exec node --import tsx --test --test-concurrency=2 --test-timeout=240000 \
  --test-reporter=tap --test-reporter-destination=stdout \
  --test-reporter=./scripts/failure-summary-reporter.mjs --test-reporter-destination=stdout \
  "${files[@]}"
