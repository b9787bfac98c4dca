#!/usr/bin/env bash
# kafka-reassign-partitions.sh (see src/cli/kafka-reassign-partitions.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-reassign-partitions.js" "$@"
