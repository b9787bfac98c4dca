#!/usr/bin/env bash
# Compiles the tests for a run: type-checks src/, test/, tools/ and bench/ (what tsconfig.check.json
# checks) and emits them into .test-build/ (tsconfig.test.json), then links every other file of the
# repository there, dist/ included (scripts/link-test-build.mjs), so that a compiled test finds its
# fixtures where its source did. Node then runs the tests' JavaScript without tsx: under tsx's
# loader every module a test process imports costs a hop to the loader's thread, about a second of
# CPU per test file.
# Usage: bash scripts/test-build.sh          (after npm run build: the links take dist/ as it is)
#        bash scripts/test-build.sh --emit   (only the type check and the JavaScript: scripts/test.sh
#                                             runs it beside the build, then --link)
#        bash scripts/test-build.sh --link   (only the links)
# A failed type check exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != --link ]; then
  rm -rf .test-build # tsc only adds files: a deleted test's JavaScript must not stay behind
  npx tsc -p tsconfig.test.json
fi
if [ "${1:-}" != --emit ]; then node scripts/link-test-build.mjs; fi
