"""librdkafka's own regression suite against kafkapy: the allowlisted tests must pass.

The suite is built (once, cached) from Debian's source of the librdkafka the environment links,
and each allowlisted test runs in quick mode against kafkapy set up as librdkafka's test
clusters are for it: a broker of its scenario, a 3-broker cluster, or a broker with SSL and
SASL listeners (librdkafka.py, librdkafka_brokers.py). Tests not on the allowlist are
accounted for in FINDINGS.md; the whole suite runs with `python -m compat_tests.suites.librdkafka`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.suites import librdkafka
from compat_tests.suites.librdkafka import SuiteUnavailable

pytestmark = pytest.mark.timeout(1200)

ALLOWED = librdkafka.read_allowlist()
FINDINGS = Path(__file__).with_name("FINDINGS.md")


@pytest.fixture(scope="module")
def suite():
    try:
        return librdkafka.build(progress=lambda line: print(line, flush=True))
    except SuiteUnavailable as e:
        pytest.skip(f"librdkafka's regression suite is unavailable here: {e}")


@pytest.fixture(scope="module")
def table(suite) -> dict[str, librdkafka.SuiteTest]:
    return {t.name: t for t in librdkafka.list_tests(suite)}


@pytest.fixture(scope="module")
def results(suite, table, tmp_path_factory) -> dict[str, librdkafka.Result]:
    chosen = librdkafka.select(table.values(), ALLOWED)
    return librdkafka.run_suite(suite, chosen, tmp_path_factory.mktemp("librdkafka"))


def test_allowlist_names_real_broker_tests(table):
    names = {a: a.partition(":")[0] for a in ALLOWED}
    wrong = {a: table[n].scope if n in table else "not in this suite" for a, n in names.items()
             if n not in table or table[n].scope not in librdkafka.RUNNABLE}
    assert not wrong, f"allowlist entries that are not broker tests of this suite: {wrong}"


def test_every_broker_test_is_allowlisted_or_in_findings(table):
    """A test allowlisted whole passes; any other broker test (or one allowlisted only for some
    of its sub-tests) has its entry in FINDINGS.md."""
    findings = FINDINGS.read_text()
    unaccounted = [n for n, t in table.items() if t.scope in librdkafka.RUNNABLE
                   and n not in ALLOWED and f"`{n}`" not in findings]
    assert not unaccounted, ("broker tests neither allowlisted nor explained in FINDINGS.md: "
                             f"{unaccounted}")


@pytest.mark.parametrize("name", ALLOWED)
def test_allowlisted(name, results):
    librdkafka.check_allowlisted(name, results)


def test_only_a_listed_client_timing_failure_runs_again():
    """The second run is for the exact client-side assertion of CLIENT_TIMING_FAILURES, failed
    by that test: any other failure, test or state is final."""
    text = librdkafka.CLIENT_TIMING_FAILURES["0103_transactions"]
    lost = librdkafka.Result("0103_transactions", "FAILED", 0.6, f"Test assertion failed: {text}")
    assert librdkafka._lost_client_timing({lost.name: lost}) is lost
    others = [
        librdkafka.Result("0103_transactions", "FAILED", 9.0, "Expected 10 messages, not 9"),
        librdkafka.Result("0103_transactions", "TIMEOUT", 420.0, text),
        librdkafka.Result("0098_consumer_txn", "FAILED", 1.0, text),
    ]
    for r in others:
        assert librdkafka._lost_client_timing({r.name: r}) is None, r
