"""Small modules with one job each: no Python module of the project passes 500 lines unless a
reason is stated here.

Past about 500 lines a module usually holds several jobs; kafkapy/ holds none that long. A test
or benchmark module may, when it is one subject's list of independent cases or one table of
data; its reason is written below, and the test fails when a module grows past the limit
without one, or when a listed module has shrunk under it (the entry then goes).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("kafkapy", "tests", "compat_tests", "benchmarks", "scripts")
LIMIT = 500
REASONS = {
    "compat_tests/test_cli_tools.py": (
        "one case per Kafka tool invocation compared with Kafka's own output; cases share "
        "the module's broker"),
    "compat_tests/test_admin_apis.py": (
        "one case per admin API and error path against one shared broker"),
    "compat_tests/security/test_authorization.py": (
        "one case per (API, ACL) rule of Kafka's authorization table"),
    "compat_tests/suites/librdkafka.py": (
        "librdkafka's suite runner: build, environment, per-test runs and allowlist; one job"),
    "tests/test_zk_store_contract.py": (
        "the metadata store contract, the same cases on ZooKeeper and the embedded store"),
    "tests/test_group_migration.py": (
        "the classic <-> consumer protocol migration cases of KIP-848, one state machine"),
    "tests/test_txn_storage.py": "the transactional log's cases (KIP-98/890) on real segments",
    "tests/test_cli_formats.py": "one case per tool output format compared with Kafka's",
}


def module_lengths() -> dict[str, int]:
    lengths = {}
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            lengths[str(path.relative_to(ROOT))] = len(path.read_text().splitlines())
    return lengths


def test_no_module_over_the_limit_without_a_reason():
    long = {m: n for m, n in module_lengths().items() if n > LIMIT}
    unexplained = {m: n for m, n in long.items() if m not in REASONS or m.startswith("kafkapy/")}
    assert not unexplained, (f"modules over {LIMIT} lines (split them by job, or, for a test "
                             f"or data module, state the reason in REASONS): {unexplained}")


def test_every_reason_is_still_needed():
    lengths = module_lengths()
    stale = [m for m in REASONS if lengths.get(m, 0) <= LIMIT]
    assert not stale, f"these modules are within {LIMIT} lines now; drop their entries: {stale}"
