"""Differential fuzzing (issue 21, item 6): the wire fuzzer's cases sent to kafkapy and to Apache
Kafka 4.4 (a reference broker), each broker's answer reduced to what a client sees (answered,
with which error codes; connection closed; left waiting), and the two compared
(compat_tests/fuzz/differential.py).

The run is seeded and both brokers are its own, started empty with the same settings (the fuzz
may alter configs, delete topics or fence producers: no other session shares them), so it
repeats: the same cases and, but for timing, the same differences. Each kind of difference
(API, version, case kind, both observations: `Difference.signature()`) must be listed in
``fuzz_known_differences.txt``, whose kinds FINDINGS.md explains ("Differential fuzzing"): a
new kind fails the test, with its cases' frames printed so they can be replayed. A listed kind
that does not occur is reported, not failed: the list shrinks as kafkapy is fixed, and which
timing-bound kinds a run meets can vary. KAFKAPY_DIFF_FUZZ_CASES sets the number of cases per
API version (default 1; each case is seeded by the seed, its API and its version, so a newly
served API adds its own cases and changes no other) and KAFKAPY_DIFF_FUZZ_SEED the seed, for
longer runs by hand;
KAFKAPY_DIFF_FUZZ_RECORD=1 adds the kinds found to the list (then explain them in FINDINGS.md).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from compat_tests.fuzz import differential
from compat_tests.fuzz.generate import Targets
from compat_tests.fuzz.runner import prepare
from kafkapy.testing import BrokerProcess

from .conftest import SHARED_CONFIG
from .kafka_broker import ReferenceKafka, java_missing

KNOWN = Path(__file__).with_name("fuzz_known_differences.txt")
SEED = os.environ.get("KAFKAPY_DIFF_FUZZ_SEED", "kafkapy-21")
CASES = int(os.environ.get("KAFKAPY_DIFF_FUZZ_CASES", "1"))


def known_kinds() -> set[str]:
    return {line for line in KNOWN.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def test_differential_fuzz(tmp_path: Path) -> None:
    assert java_missing() is None, java_missing()
    with ReferenceKafka(tmp_path / "kafka-4.4", SHARED_CONFIG) as kafka_reference:
        report = fuzz_both(kafka_reference, tmp_path)
    check(report)


def fuzz_both(kafka_reference: ReferenceKafka, tmp_path: Path) -> differential.DifferentialReport:
    kafkapy = BrokerProcess(tmp_path / "kafkapy", SHARED_CONFIG)
    kafkapy.start()
    try:
        def targets() -> Targets:
            return Targets(topics=[f"dfz-{SEED}"], groups=[f"dfg-{SEED}"])

        prepare(kafkapy, targets=targets())
        prepare(kafka_reference, targets=targets())
        report = differential.run(kafkapy.bootstrap, kafka_reference.bootstrap, targets(),
                                  SEED, CASES)
    finally:
        assert kafkapy.stop() == 0, kafkapy.log_text()[-3000:]
    return report


def check(report: differential.DifferentialReport) -> None:
    print(report.summary())
    kinds = report.by_signature()
    for kind, n in kinds.most_common():
        print(f"{n:4d}  {kind}")
    if os.environ.get("KAFKAPY_DIFF_FUZZ_RECORD"):
        header = [line for line in KNOWN.read_text().splitlines() if line.startswith("#")]
        KNOWN.write_text("\n".join([*header, *sorted(set(kinds) | known_kinds())]) + "\n")
    new = sorted(set(kinds) - known_kinds())
    frames = {d.signature(): d.case for d in report.differences}
    assert not new, (
        "differences from Apache Kafka 4.4 not in fuzz_known_differences.txt (fix them, or "
        "list and explain them in FINDINGS.md):\n"
        + "\n".join(f"{k}\n    frame {frames[k].frame().hex()}" for k in new))
    gone = sorted(known_kinds() - set(kinds))
    if gone:
        warnings.warn(f"{len(gone)} listed differential-fuzz differences did not occur in this "
                      f"run (fixed? remove them from {KNOWN.name}): {gone[:3]}", stacklevel=1)
    assert report.cases > 100 * CASES and report.same > report.cases // 2, report.summary()
