#!/usr/bin/env bash
# kafka-mirror-maker.sh (see src/cli/kafka-mirror-maker.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-mirror-maker.js" "$@"
