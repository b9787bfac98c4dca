#!/usr/bin/env bash
# The whole sweep at num.io.threads=N (docs/threads.md, "Swept at 3"): every test file that starts
# an embedded broker through the test helpers, so FJORD_TEST_IO_THREADS reaches it, run at N.
# Usage: bash scripts/test-threads-all.sh           (N = 3, one file at a time: hours on 2 cores)
#        bash scripts/test-threads-all.sh --list    (only print the files it would run)
#        bash scripts/test-threads-all.sh FILE...   (only these files, e.g. the failures of a sweep)
#        FJORD_TEST_IO_THREADS=4 TEST_CONCURRENCY=2 bash scripts/test-threads-all.sh
# The files are found, not listed, so a new test is swept as soon as it starts a broker through
# test/helpers/broker.ts (startTestBroker), broker-child.ts (BrokerChild) or passes its broker
# properties through withTestIoThreads (the fuzz suites); helpers that start one for a test
# (bomb-broker-child.ts, chaos-members/chaos.ts) count as the test's own call. A file that only
# starts ZooKeeper-mode brokers (test/helpers/cluster.ts, inproc-cluster.ts), or a broker of its
# own with `new Broker` or bin/kafka-server-start.sh, is not reached by the setting and not run.
set -euo pipefail
cd "$(dirname "$0")/.."
starts='startTestBroker|BrokerChild\.start|withTestIoThreads'
# Modules under test/ (not tests themselves, not the helpers that define the calls) that start a
# broker for the tests importing them: a test naming one of them starts a broker too.
mapfile -t helpers < <(grep -rlE "$starts" test --include='*.ts' | grep -v '\.test\.ts$' |
  grep -vE '^test/helpers/(broker|broker-child|broker-child-main|io-threads)\.ts$' | sort)
pattern=$starts
for h in "${helpers[@]}"; do pattern+="|$(basename "$h" .ts)\.(js|ts)"; done
mapfile -t files < <(grep -rlE "$pattern" test --include='*.test.ts' | sort)
if [ "${1:-}" = "--list" ]; then printf '%s\n' "${files[@]}"; exit 0; fi
if [ "$#" -gt 0 ]; then files=("$@"); fi
threads=${FJORD_TEST_IO_THREADS:-3}
echo "running ${#files[@]} test files at num.io.threads=$threads"
npm run --silent build # shard workers and the CLI tools the tests spawn run from dist/
# The test files run compiled, as npm test runs them (scripts/test-build.sh): test/x.test.ts as
# .test-build/test/x.test.js.
bash scripts/test-build.sh
compiled=()
for f in "${files[@]}"; do
  f=${f#./}
  compiled+=(".test-build/${f%.ts}.js")
done
export FJORD_PROTOCOL_SPECS="${FJORD_PROTOCOL_SPECS:-$(dirname "$PWD")/shared/kafka-protocol}" # as scripts/test.sh says
FJORD_TEST_IO_THREADS=$threads node --test --test-concurrency="${TEST_CONCURRENCY:-1}" --test-timeout=240000 \
  --test-reporter=tap --test-reporter-destination=stdout \
  --test-reporter=./scripts/failure-summary-reporter.mjs --test-reporter-destination=stdout \
  "${compiled[@]}"
