#!/usr/bin/env bash
# kafka-delegation-tokens.sh as Apache Kafka ships it, served by `kafkapy delegation-tokens` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" delegation-tokens "$@"
