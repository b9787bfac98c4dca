#!/usr/bin/env bash
# Dump Kafka log segments and index files (see src/cli/kafka-dump-log.ts).
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-dump-log.js" "$@"
