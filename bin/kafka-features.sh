#!/usr/bin/env bash
# kafka-features.sh (see src/cli/kafka-features.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-features.js" "$@"
