#!/usr/bin/env bash
# kafka-reassign-partitions.sh as Apache Kafka ships it, served by `kafkapy reassign-partitions`.
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" reassign-partitions "$@"
