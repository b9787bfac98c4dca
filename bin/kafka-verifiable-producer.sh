#!/usr/bin/env bash
# kafka-verifiable-producer.sh (see src/cli/kafka-verifiable-producer.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-verifiable-producer.js" "$@"
