"""librdkafka 2.14.2's regression suite against kafkapy: the allowlisted tests must pass.

The current librdkafka release beside the 2.0.2 the environment links (test_librdkafka.py): its
suite is built (by scripts/bootstrap.sh --tests, cached) from Debian sid's source package, the
test-runner linked to the library built with it, and each test in
`librdkafka-2.14-allowlist.txt` runs in quick mode against kafkapy set up as for 2.0.2's suite
(librdkafka.py, librdkafka_brokers.py). The allowlist holds the tests that pass reliably and
fit the test command's budget; every other broker test of the suite is accounted for in
FINDINGS.md's "librdkafka 2.14.2" section, and
`python -m compat_tests.suites.librdkafka --version 2.14.2` runs the whole suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.suites import librdkafka
from compat_tests.suites.librdkafka import SuiteUnavailable

pytestmark = pytest.mark.timeout(1200)

VERSION = "2.14.2"
ALLOWED = librdkafka.read_allowlist(librdkafka.allowlist_path(VERSION))
FINDINGS = Path(__file__).with_name("FINDINGS.md")
SECTION = "## librdkafka 2.14.2"


@pytest.fixture(scope="module")
def suite() -> librdkafka.Build:
    try:
        return librdkafka.build(VERSION, progress=lambda line: print(line, flush=True))
    except SuiteUnavailable as e:
        pytest.skip(f"librdkafka {VERSION}'s regression suite is unavailable here: {e}")


@pytest.fixture(scope="module")
def table(suite: librdkafka.Build) -> dict[str, librdkafka.SuiteTest]:
    return {t.name: t for t in librdkafka.list_tests(suite)}


@pytest.fixture(scope="module")
def results(suite: librdkafka.Build, table: dict[str, librdkafka.SuiteTest],
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, librdkafka.Result]:
    chosen = librdkafka.select(table.values(), ALLOWED)
    return librdkafka.run_suite(suite, chosen, tmp_path_factory.mktemp("librdkafka-2.14"))


def findings_section() -> str:
    """FINDINGS.md's section on this version, up to the next top-level heading."""
    text = FINDINGS.read_text()
    assert SECTION in text, f"FINDINGS.md has no {SECTION!r} section"
    rest = text[text.index(SECTION) + len(SECTION):]
    return rest.split("\n## ", 1)[0]


def test_suite_is_the_version_asked_for(suite: librdkafka.Build) -> None:
    assert suite.version.split("-")[0] == VERSION, suite.version


def test_runner_loads_the_library_built_with_it(suite: librdkafka.Build) -> None:
    """test-runner runs against the 2.14.2 built beside it, not the system's 2.0.2: with the
    runner's LD_LIBRARY_PATH, and without it (its run path)."""
    from compat_tests.suites.librdkafka_build import linked_elsewhere

    assert linked_elsewhere(suite, suite.library_path()) == []
    assert linked_elsewhere(suite) == []


def test_allowlist_names_real_broker_tests(table: dict[str, librdkafka.SuiteTest]) -> None:
    names = {a: a.partition(":")[0] for a in ALLOWED}
    wrong = {a: table[n].scope if n in table else "not in this suite" for a, n in names.items()
             if n not in table or table[n].scope not in librdkafka.RUNNABLE}
    assert not wrong, f"allowlist entries that are not broker tests of this suite: {wrong}"


def test_every_broker_test_is_allowlisted_or_in_findings(
        table: dict[str, librdkafka.SuiteTest]) -> None:
    """A test allowlisted whole passes; any other broker test (or one allowlisted only for some
    of its sub-tests) has its entry in FINDINGS.md's section on this version."""
    findings = findings_section()
    unaccounted = [n for n, t in table.items() if t.scope in librdkafka.RUNNABLE
                   and n not in ALLOWED and f"`{n}`" not in findings]
    assert not unaccounted, ("broker tests neither allowlisted nor explained in FINDINGS.md's "
                             f"{VERSION} section: {unaccounted}")


@pytest.mark.parametrize("name", ALLOWED)
def test_allowlisted(name: str, results: dict[str, librdkafka.Result]) -> None:
    librdkafka.check_allowlisted(name, results)
