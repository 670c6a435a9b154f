#!/usr/bin/env bash
# kafka-delete-records.sh as Apache Kafka ships it, served by `kafkapy delete-records` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" delete-records "$@"
