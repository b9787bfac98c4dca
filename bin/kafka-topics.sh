#!/usr/bin/env bash
# kafka-topics.sh (see src/cli/kafka-topics.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-topics.js" "$@"
