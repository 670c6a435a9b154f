#!/usr/bin/env bash
# kafka-console-consumer.sh as Apache Kafka ships it, served by `kafkapy console-consumer` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" console-consumer "$@"
