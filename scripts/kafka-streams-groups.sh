#!/usr/bin/env bash
# kafka-streams-groups.sh as Apache Kafka ships it, served by `kafkapy streams-groups` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" streams-groups "$@"
