#!/usr/bin/env bash
# kafka-consumer-perf-test.sh (see src/cli/kafka-consumer-perf-test.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-consumer-perf-test.js" "$@"
