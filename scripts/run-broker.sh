#!/usr/bin/env bash
# Run a kafkapy broker with the embedded metadata store (no ZooKeeper, no JVM):
# listener 127.0.0.1:9092, data under ./data. Extra arguments go to `kafkapy server`,
# e.g. `scripts/run-broker.sh config/server.properties --override num.partitions=3`.
# Runs from .venv-runtime: kafkapy with its runtime dependencies only, exactly what
# `pip install kafkapy` gives (built and kept current by scripts/bootstrap.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
if [ "$#" -eq 0 ]; then
  set -- config/server.properties
fi
exec .venv-runtime/bin/kafkapy server "$@"
