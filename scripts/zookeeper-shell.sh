#!/usr/bin/env bash
# zookeeper-shell.sh as Apache Kafka ships it, served by `kafkapy zookeeper-shell` (ls, get, stat).
set -euo pipefail
"$(dirname "$0")/bootstrap.sh"
exec "$(dirname "$0")/../.venv-runtime/bin/kafkapy" zookeeper-shell "$@"
