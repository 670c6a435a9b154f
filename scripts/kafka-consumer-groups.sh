#!/usr/bin/env bash
# kafka-consumer-groups.sh as Apache Kafka ships it, served by `kafkapy consumer-groups` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" consumer-groups "$@"
