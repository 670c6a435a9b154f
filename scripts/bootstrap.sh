#!/usr/bin/env bash
# Set up what kafkapy needs on a fresh machine, skipping what is already there:
#   scripts/bootstrap.sh          .venv-runtime: kafkapy as `pip install kafkapy` installs it, the
#                                 package (not editable) with pyproject.toml's runtime
#                                 dependencies and no extras. scripts/run-broker.sh and the
#                                 scripts/kafka-*.sh tools run from it. Kept current: rebuilt
#                                 when pyproject.toml or setup.py change, the package reinstalled
#                                 when one of its sources does (scripts/runtime_venv.py).
#   scripts/bootstrap.sh --tests  .venv: the development and test environment, an editable
#                                 install with the test and spark extras (pytest, kafka-python
#                                 and the codecs it compresses with, PySpark), and the Debian
#                                 packages the tests use: default-jre-headless (Java), zookeeper,
#                                 kcat, and for the compatibility suites (compat_tests/suites)
#                                 javac and the build dependencies of librdkafka's regression
#                                 suite; and, by name from Maven Central with maven's `mvn`,
#                                 Apache Kafka 4.4's jars (broker, tools, client), Kafka 3.9's
#                                 client and Spark's kafka connector for the pinned PySpark
#                                 (compat_tests/suites/artifacts.py, cached under ~/.cache); and
#                                 Go, with franz-go's integration suite compiled
#                                 (compat_tests/suites/franz_go.py); then builds librdkafka's suites,
#                                 2.0.2's and 2.14.2's (cached, librdkafka_build.py). Does not
#                                 touch .venv-runtime.
#
# Two environments on purpose. .venv is a superset (extras, editable sources): a broker run from
# it could import a module users never get and still pass. So the broker users run comes from the
# runtime-only install, built by one script (scripts/runtime_venv.py) for run-broker.sh, for the
# Docker image, and for compat_tests/test_runtime_install.py, which starts a broker from such an
# install (cached under ~/.cache/kafkapy-tests) and produces and fetches every codec with the
# test environment's clients. The suite's other brokers run from .venv, and
# tests/test_runtime_imports.py checks that every broker import is a runtime dependency.
# Safe to run again; it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" != "--tests" ] && [ "${1:-}" != "--system" ]; then
  python3 scripts/runtime_venv.py .venv-runtime >/dev/null
  exit 0
fi

extras="[test,spark]"
missing=()
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
# javac compiles the Java client compat program (compat_tests/suites)
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
# mvn fetches the JVM pieces of the tests from Maven Central (compat_tests/suites/artifacts.py)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
[ -e /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
# franz-go's suite (compat_tests/suites/franz_go.py) is compiled with Go; a Go older than its
# go.mod fetches the toolchain it names from the Go module proxy
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
# building librdkafka's regression suite (compat_tests/suites/librdkafka.py); libcurl for
# 2.14.2's OIDC support, a build dependency of Debian's package of it
for pkg in gcc g++ make dpkg-dev liblz4-dev libzstd-dev libssl-dev zlib1g-dev libsasl2-dev \
           rapidjson-dev libcurl4-openssl-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
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
  .venv/bin/python -c "import kafka, pytest, pyspark, pyarrow"
  touch "$stamp"
fi

# Apache Kafka's jars and Spark's connector from Maven Central (a no-op once cached)
.venv/bin/python -m compat_tests.suites.artifacts

# franz-go's integration suite: fetched and its test binary compiled once (cached under
# ~/.cache/kafkapy-suites), so that the test run does not pay for it
.venv/bin/python -m compat_tests.suites.franz_go --prepare >/dev/null \
  || echo "bootstrap: franz-go's suite is not prepared (compat_tests/suites/test_franz_go.py" \
          "will say why)" >&2

# librdkafka's regression suites, built once (a few minutes each) and cached: the test command
# finds them there. Not fatal here: the suites' tests then fail, saying why.
.venv/bin/python -m compat_tests.suites.librdkafka_build \
  || echo "bootstrap: librdkafka's regression suites could not be built (above)" >&2
