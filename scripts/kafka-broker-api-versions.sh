#!/usr/bin/env bash
# kafka-broker-api-versions.sh as Apache Kafka ships it, served by `kafkapy broker-api-versions` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" broker-api-versions "$@"
