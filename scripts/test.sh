#!/usr/bin/env bash
# The whole test suite: installs what the tests need (when missing), lints, builds, runs every test file.
# Usage: npm test            (all tests, then the test:threads files again at num.io.threads=3)
#        npm test -- FILE... (only these files: test/x.test.ts as in the tree)
# The test files run compiled (scripts/test-build.sh: .test-build/x.test.js for test/x.test.ts),
# not under tsx: the same code, without tsx's cost for every module a test process loads (minutes
# of CPU over the suite). FJORD_TEST_TSX=1 runs them under tsx, from the sources, as a single
# file runs with `node --import tsx --test test/x.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
npm run --silent lint            # Biome (biome.jsonc): its rules and the format; a finding fails the suite
# The build (node scripts/build.mjs: tsc with the type check; stamps dist/ for npm start and npm
# pack) and the tests' build (tsc: the type check of src, tests, tools and benches, emitted into
# .test-build/) side by side: each is one tsc on one core.
npm run --silent build &
build=$!
check_status=0
bash scripts/test-build.sh --emit || check_status=$?
build_status=0
wait "$build" || build_status=$?
if [ "$build_status" -ne 0 ] || [ "$check_status" -ne 0 ]; then exit 1; fi
bash scripts/test-build.sh --link # dist/ too, so after the build
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
echo "running ${#files[@]} test files"
# The generator's default place for Kafka's specs is relative to its module (../shared beside the
# repository); from .test-build/ that would be one folder too deep.
export FJORD_PROTOCOL_SPECS="${FJORD_PROTOCOL_SPECS:-$(dirname "$PWD")/shared/kafka-protocol}"
# TAP on stdout; the failed tests named again at the very end (CI keeps a log's tail): on stdout
# when one pass runs, else into $summary, printed once both passes are done.
summary=stdout
run_files() {
  local runner=(node) paths=() f
  if [ "${FJORD_TEST_TSX:-}" = 1 ]; then
    runner=(node --import tsx)
    paths=("$@")
  else
    # A .ts path (as given, ./-prefixed or absolute) stands for its JavaScript under .test-build/.
    for f in "$@"; do
      f=${f#"$PWD"/}
      f=${f#./}
      if [[ "$f" == *.ts ]]; then paths+=(".test-build/${f%.ts}.js"); else paths+=("$f"); fi
    done
  fi
  "${runner[@]}" --test --test-concurrency=2 --test-timeout=240000 \
    --test-reporter=tap --test-reporter-destination=stdout \
    --test-reporter=./scripts/failure-summary-reporter.mjs --test-reporter-destination="$summary" \
    "${paths[@]}"
}
if [ "$#" -gt 0 ]; then run_files "${files[@]}"; exit 0; fi # set -e: a failure exits with its status
summaries=$(mktemp -d)
trap 'rm -rf "$summaries"' EXIT
status=0
summary="$summaries/1-all-files"
run_files "${files[@]}" || status=$?
# The same broker with its partitions on shard worker threads (num.io.threads=3, docs/threads.md):
# the files of `npm run test:threads` again, every embedded broker they start at 3 threads.
mapfile -t threaded < <(node -e 'const s=require("./package.json").scripts["test:threads"]; console.log(s.split(/\s+/).filter((w)=>w.endsWith(".test.ts")).join("\n"))')
echo "running ${#threaded[@]} test files again at num.io.threads=3"
summary="$summaries/2-at-3-threads"
FJORD_TEST_IO_THREADS=3 run_files "${threaded[@]}" || status=$?
for f in "$summaries"/*; do
  if [ -s "$f" ]; then echo "# $(basename "$f"):"; cat "$f"; fi
done
if [ "$status" -eq 0 ]; then echo "# both passes: every test passed"; fi
exit "$status"
