#!/usr/bin/env bash
# kafka-share-groups.sh as Apache Kafka ships it, served by `kafkapy share-groups` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" share-groups "$@"
