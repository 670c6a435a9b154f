"""franz-go's own integration suite against kafkapy: the allowlisted tests must pass.

The test binary of franz-go's ``pkg/kgo`` (fetched from the Go module proxy and compiled once,
cached; scripts/bootstrap.sh --tests prepares it) runs the allowlisted tests against a fresh
kafkapy broker set up as franz-go's CI sets up Kafka 4.x (franz_go.py). A failed or skipped
allowlisted test fails here. Tests not on the allowlist are accounted for in FINDINGS.md; the
whole suite runs with ``python -m compat_tests.suites.franz_go``. The parser of the binary's
output is tested on its own, without Go.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compat_tests.suites import franz_go
from compat_tests.suites.franz_go_build import GoMissing, SuiteUnavailable

pytestmark = pytest.mark.timeout(900)

ALLOWED = franz_go.read_allowlist()
FINDINGS = Path(__file__).with_name("FINDINGS.md")


@pytest.fixture(scope="module")
def suite() -> franz_go.Build:
    try:
        return franz_go.build(progress=lambda line: print(line, flush=True))
    except GoMissing as e:
        pytest.skip(f"franz-go's suite needs Go: {e}")
    except SuiteUnavailable as e:  # Go is here: fetching or compiling must work
        pytest.fail(f"franz-go's suite could not be prepared: {e}")


@pytest.fixture(scope="module")
def table(suite: franz_go.Build) -> list[str]:
    return franz_go.list_tests(suite)


@pytest.fixture(scope="module")
def results(suite: franz_go.Build, table: list[str], tmp_path_factory
            ) -> dict[str, franz_go.Result]:
    chosen = [t for t in ALLOWED if t in table]
    return franz_go.run_suite(suite, chosen, tmp_path_factory.mktemp("franz-go"),
                              progress=lambda line: print(line, flush=True))


def test_allowlist_names_tests_of_the_suite(table: list[str]) -> None:
    unknown = [a for a in ALLOWED if a not in table]
    assert not unknown, f"allowlist entries that are not tests of franz-go's pkg/kgo: {unknown}"
    assert len(set(ALLOWED)) == len(ALLOWED), "an allowlist entry is repeated"


def test_every_test_is_allowlisted_or_in_findings(table: list[str]) -> None:
    findings = FINDINGS.read_text()
    start = findings.index("## franz-go v1.22.3")
    end = findings.find("\n## ", start + 1)
    section = findings[start:end if end > 0 else None]  # franz-go's section, not librdkafka's
    unaccounted = [t for t in table if t not in ALLOWED and f"`{t}`" not in section]
    assert not unaccounted, f"tests neither allowlisted nor explained in FINDINGS.md: {unaccounted}"


@pytest.mark.parametrize("name", ALLOWED)
def test_allowlisted(name: str, results: dict[str, franz_go.Result]) -> None:
    r = results.get(name)
    assert r is not None, f"{name} did not run"
    if r.state != "PASSED":
        tail = "\n".join(r.output[-60:])
        pytest.fail(f"{name} {r.state} after {r.seconds:.2f}s: {r.reason}\n--- its output ---\n"
                    f"{tail}")


# ---- the output parser, on text shaped as go's -test.v output ----------------------------------

VERBOSE_OUTPUT = """\
=== RUN   TestPing
=== PAUSE TestPing
=== RUN   TestShareGroup
    client_test.go:399: broker does not support share groups
--- SKIP: TestShareGroup (0.00s)
=== RUN   TestGroupETL
=== PAUSE TestGroupETL
=== RUN   TestCompressDecompress
=== RUN   TestCompressDecompress/lz4
    --- PASS: TestCompressDecompress/lz4 (0.01s)
--- PASS: TestCompressDecompress (0.02s)
=== CONT  TestPing
=== CONT  TestGroupETL
[15:22:44.19 11][INFO] assigning partitions; why: a client log line
=== NAME  TestPing
    client_test.go:40: unable to ping: broker closed the connection
    client_test.go:48: FAILED TESTING -- NOT DELETING TOPIC t
--- FAIL: TestPing (1.50s)
=== RUN   TestTxnEtl
=== RUN   TestTxnEtl/sub
=== NAME  TestTxnEtl/sub
    txn_test.go:77: sub-test failed: count 9 != 10
    --- FAIL: TestTxnEtl/sub (3.25s)
--- FAIL: TestTxnEtl (3.30s)
=== RUN   FuzzRecordReader
--- PASS: FuzzRecordReader (0.01s)
=== CONT  TestGroupETL
panic: test timed out after 5m0s
\trunning tests:
\t\tTestGroupETL (5m0s)
FAIL
"""


def test_parse_output_results_per_top_level_test() -> None:
    results = franz_go.parse_output(VERBOSE_OUTPUT, started=["TestNeverMentioned"])
    got = {n: (r.state, r.seconds) for n, r in results.items()}
    assert got == {
        "TestPing": ("FAILED", 1.5),
        "TestShareGroup": ("SKIPPED", 0.0),
        "TestGroupETL": ("FAILED", 0.0),  # no result line: the binary panicked under it
        "TestCompressDecompress": ("PASSED", 0.02),
        "TestTxnEtl": ("FAILED", 3.3),
        "FuzzRecordReader": ("PASSED", 0.01),
        "TestNeverMentioned": ("FAILED", 0.0),
    }
    # the reason: the first message the test logged (not the cleanup after it), the skip's
    # message, a sub-test's message for its top-level test, the binary's panic
    assert results["TestPing"].reason == (
        "client_test.go:40: unable to ping: broker closed the connection")
    assert results["TestShareGroup"].reason == (
        "client_test.go:399: broker does not support share groups")
    assert results["TestTxnEtl"].reason == "txn_test.go:77: sub-test failed: count 9 != 10"
    assert results["TestGroupETL"].reason == "panic: test timed out after 5m0s"
    assert results["TestCompressDecompress"].reason == ""
    # each test keeps its own lines, a sub-test's included
    assert "    --- PASS: TestCompressDecompress/lz4 (0.01s)" in (
        results["TestCompressDecompress"].output)
    assert not any("unable to ping" in line for line in results["TestGroupETL"].output)


def test_parse_output_of_nothing_fails_every_started_test() -> None:
    results = franz_go.parse_output("", started=["TestA"])
    assert {n: r.state for n, r in results.items()} == {"TestA": "FAILED"}
    assert "ended" in results["TestA"].reason
