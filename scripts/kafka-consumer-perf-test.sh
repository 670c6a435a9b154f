#!/usr/bin/env bash
# kafka-consumer-perf-test.sh as Apache Kafka ships it, served by `kafkapy consumer-perf-test` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" consumer-perf-test "$@"
