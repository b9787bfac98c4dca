#!/usr/bin/env bash
# kafka-producer-perf-test.sh (see src/cli/kafka-producer-perf-test.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-producer-perf-test.js" "$@"
