#!/usr/bin/env bash
# kafka-topics.sh as Apache Kafka ships it, served by `kafkapy topics` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" topics "$@"
