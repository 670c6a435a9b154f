#!/usr/bin/env bash
# kafka-transactions.sh as Apache Kafka ships it, served by `kafkapy transactions` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" transactions "$@"
