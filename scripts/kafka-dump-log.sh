#!/usr/bin/env bash
# kafka-dump-log.sh as Apache Kafka ships it, served by `kafkapy dump-log` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" dump-log "$@"
