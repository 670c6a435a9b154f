#!/usr/bin/env bash
# Set up what kafkapy needs on a fresh machine, skipping what is already there:
#   scripts/bootstrap.sh          .venv with kafkapy and its runtime dependencies (run the broker)
#   scripts/bootstrap.sh --tests  also the test and Spark extras, and the Debian packages the tests
#                                 use: default-jre-headless (Java), zookeeper, kcat
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
if [ "${1:-}" = "--tests" ] || [ "${1:-}" = "--system" ]; then
  extras="[test,spark]"
  missing=()
  command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
  [ -e /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
  command -v kcat >/dev/null 2>&1 || missing+=(kcat)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "bootstrap: installing Debian packages: ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
fi

stamp=".venv/.kafkapy-installed${extras}"
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv" >&2
  python3 -m venv .venv
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing Python dependencies${extras} into .venv (first run takes a while)" >&2
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' >&2 || true
  .venv/bin/python -m pip install -q -e ".${extras}" 2>&1 | grep -v '^WARNING: Location' >&2 || true
  .venv/bin/python -c "import kafkapy, kio, trio, confluent_kafka"
  if [ -n "$extras" ]; then
    .venv/bin/python -c "import kafka, pytest, pyspark, pyarrow"
  fi
  touch "$stamp"
fi
