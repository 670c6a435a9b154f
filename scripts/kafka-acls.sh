#!/usr/bin/env bash
# kafka-acls.sh as Apache Kafka ships it, served by `kafkapy acls` (see --help).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" acls "$@"
