#!/usr/bin/env bash
# Install what the tests need (Python deps, Java, ZooKeeper, kcat) when missing, lint, and run
# the whole test suite: unit tests (tests/) and real clients against a real broker (compat_tests/).
# A skipped test fails the run (--no-skips, see conftest.py): bootstrap installs what every test
# needs, so a skip would hide a test that did not run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --tests
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q --no-skips "$@"
