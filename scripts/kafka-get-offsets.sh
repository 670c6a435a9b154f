#!/usr/bin/env bash
# kafka-get-offsets.sh as Apache Kafka ships it, served by `kafkapy get-offsets` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" get-offsets "$@"
