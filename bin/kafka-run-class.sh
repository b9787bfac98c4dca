#!/usr/bin/env bash
# kafka-run-class.sh <class> [args] (see src/cli/kafka-run-class.ts): Kafka's ExportZkOffsets and ImportZkOffsets
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-run-class.js" "$@"
