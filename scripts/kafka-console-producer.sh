#!/usr/bin/env bash
# kafka-console-producer.sh as Apache Kafka ships it, served by `kafkapy console-producer` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" console-producer "$@"
