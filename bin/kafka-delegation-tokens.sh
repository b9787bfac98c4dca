#!/usr/bin/env bash
# kafka-delegation-tokens.sh (see src/cli/kafka-delegation-tokens.ts)
exec node "$(dirname "$(readlink -f "$0")")/../dist/cli/kafka-delegation-tokens.js" "$@"
