#!/usr/bin/env bash
# kafka-log-dirs.sh (see src/cli/kafka-log-dirs.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-log-dirs.js" "$@"
