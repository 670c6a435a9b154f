#!/usr/bin/env bash
# kafka-producer-perf-test.sh as Apache Kafka ships it, served by `kafkapy producer-perf-test` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" producer-perf-test "$@"
