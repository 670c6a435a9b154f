#!/usr/bin/env bash
# Set up everything kafkapy needs on a fresh machine, skipping what is already there:
#   - a Python virtual environment in .venv with kafkapy and its Python dependencies;
#   - with --system, the Debian packages the tests use (default-jre-headless, zookeeper, kcat).
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

want_system=0
[ "${1:-}" = "--system" ] && want_system=1

if [ "$want_system" = 1 ]; then
  missing=()
  command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
  [ -e /usr/share/java/zookeeper.jar ] || ls /usr/share/java/zookeeper-*.jar >/dev/null 2>&1 \
    || missing+=(zookeeper)
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

stamp=.venv/.kafkapy-installed
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv" >&2
  python3 -m venv .venv
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing Python dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test]' 2>&1 | grep -v '^WARNING: Location' >&2 || true
  .venv/bin/python -c "import kafkapy, kio, trio, confluent_kafka, kafka" 
  touch "$stamp"
fi
