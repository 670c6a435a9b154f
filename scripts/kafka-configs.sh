#!/usr/bin/env bash
# kafka-configs.sh as Apache Kafka ships it, served by `kafkapy configs` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" configs "$@"
