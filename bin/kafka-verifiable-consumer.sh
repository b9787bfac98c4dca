#!/usr/bin/env bash
# kafka-verifiable-consumer.sh (see src/cli/kafka-verifiable-consumer.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-verifiable-consumer.js" "$@"
