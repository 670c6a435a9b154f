"""Checks of the differential suite itself, without brokers: the comparison finds what it must
(a test that cannot fail is a defect), the known list is consistent, and every listed difference
is explained in compat_tests/suites/FINDINGS.md's differential section.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from compat_tests.reference.differential import ABSENT, Differential, Target, compare, normalise
from compat_tests.reference.known_differences import KNOWN, Known

FINDINGS = Path(__file__).resolve().parents[1] / "suites" / "FINDINGS.md"
SECTION = "# Differences from Apache Kafka 4.4 (differential suite)"


def _targets() -> tuple[Target, Target]:
    return Target("kafka", "127.0.0.1:1111", "clusterA", 1), Target("kafkapy", "127.0.0.1:2222")


def test_compare_finds_changed_missing_and_extra_paths() -> None:
    diffs = compare("s", {"a": 1, "b": {"c": [1, 2]}, "gone": 0}, {"a": 2, "b": {"c": [1]},
                                                                  "new": 0})
    assert {(d.path, d.kafka, d.kafkapy) for d in diffs} == {
        ("a", 1, 2), ("b.c.1", 2, ABSENT), ("gone", 0, ABSENT), ("new", ABSENT, 0)}


def test_normalise_hides_addresses_ids_and_clock_only() -> None:
    kafka, kafkapy = _targets()
    text = ("at 127.0.0.1:1111 of clusterA, topic 0f8fad5b-d9cb-469f-a165-70867728950e, "
            "1795796547724")
    assert normalise(text, kafka) == "at <host>:<port> of <cluster-id>, topic <uuid>, <clock>"
    assert normalise({"n": 9223372036854775807, "s": "42", "port": 2222, "other": 1111},
                     kafkapy) == {"n": 9223372036854775807, "s": "42", "port": "<port>",
                                  "other": 1111}


def test_judge_fails_on_unknown_and_on_gone_differences() -> None:
    kafka, kafkapy = _targets()
    listed = [Known("s", "x", 1, 2, "why"), Known("s", "y", 1, 2, "why")]
    diff = Differential(kafka, kafkapy, listed)
    outcome = diff.judge("s", {"x": 1, "y": 1, "z": 1}, {"x": 2, "y": 1, "z": 3})
    assert [d.path for d in outcome.known] == ["x"]
    assert [d.path for d in outcome.unknown] == ["z"]
    assert [k.path for k in outcome.gone] == ["y"]
    # a listed path whose values changed is unknown (and its entry gone), not silently known
    changed = diff.judge("s", {"x": 1, "y": 1}, {"x": 5, "y": 2})
    assert [d.path for d in changed.unknown] == ["x"] and [k.path for k in changed.gone] == ["x"]


def test_known_list_has_no_duplicates_and_every_entry_a_reason() -> None:
    keys = [(k.session, k.path) for k in KNOWN]
    assert len(keys) == len(set(keys))
    assert all(k.reason.strip() and k.kafka != k.kafkapy for k in KNOWN)


def test_every_known_difference_is_in_findings() -> None:
    text = FINDINGS.read_text()
    assert text.count(SECTION) == 1, "the differential section of FINDINGS.md is missing"
    section = text.split(SECTION, 1)[1]
    patterns: dict[str, list[str]] = {}
    for block in re.split(r"^#### ", section, flags=re.M)[1:]:
        session, _, body = block.partition("\n")
        patterns[session.strip()] = re.findall(r"`([^`]+)`", body)
    missing = [f"{k.session} {k.path}" for k in KNOWN
               if not any(fnmatch.fnmatchcase(k.path, p) for p in patterns.get(k.session, []))]
    assert not missing, "known differences without an entry in FINDINGS.md:\n" + "\n".join(missing)


def test_cluster_ids_are_never_taken_for_options() -> None:
    from compat_tests.reference.kafka_broker import random_cluster_id

    ids = [random_cluster_id() for _ in range(2000)]  # about 1 in 64 would start with "-"
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
