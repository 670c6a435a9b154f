"""The differential machinery: run one scripted client session against Apache Kafka 4.4 and
against kafkapy, normalise what the client observed, flatten it to key paths and compare.

A session is a function of a `Target` (the broker's bootstrap address and its kind) returning
what a client observed as nested dicts/lists/scalars. `normalise` turns what legitimately differs
between two brokers (ports, hosts, cluster ids, topic ids, clock values in messages) into fixed
tokens (both brokers are node 1; sessions leave out throttle times and producer ids);
`flatten` turns the result into ``{"a.b.c": value}``; `compare` lists every path where the two
brokers disagree. Apache Kafka decides: `Differential.check` fails on any difference that
known_differences.py does not list (with both values), and on a listed difference that no longer
occurs, so the list can only shrink as kafkapy is fixed. `Differential.summary` gives the counts
the run prints at its end.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from compat_tests.reference.known_differences import KNOWN, Known

ABSENT = "<absent>"
# a file to which every unknown difference is appended as a JSON line (to draft entries of
# known_differences.py from a run; the test fails all the same)
DUMP_ENV = "KAFKAPY_DIFFERENTIAL_DUMP"
# in messages: timestamps in ms (13 digits) and bounds computed from the clock (now - 2^63)
CLOCK_RE = re.compile(r"\b\d{13}\b|-9223[0-9]{15}\b")
UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


@dataclass(frozen=True)
class Target:
    """One broker a session runs against: ``kind`` is ``kafka`` (the reference) or ``kafkapy``."""

    kind: str
    bootstrap: str
    cluster_id: str | None = None
    node_id: int | None = None

    @property
    def port(self) -> int:
        return int(self.bootstrap.rsplit(":", 1)[1])


Session = Callable[[Target], Any]


def normalise(value: Any, target: Target) -> Any:
    """What a client observed, with what legitimately differs between brokers made equal."""
    if isinstance(value, dict):
        return {str(k): normalise(v, target) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v, target) for v in value]
    if isinstance(value, bytes):
        try:
            return normalise(value.decode(), target)
        except UnicodeDecodeError:
            return "0x" + value.hex()
    if isinstance(value, str):
        text = value.replace(target.bootstrap, "<host>:<port>")
        if target.cluster_id:
            text = text.replace(target.cluster_id, "<cluster-id>")
        return CLOCK_RE.sub("<clock>", UUID_RE.sub("<uuid>", text))
    if hasattr(value, "name") and hasattr(value, "value") and not isinstance(value, (int, float)):
        return str(value.name)  # enums that are not ints
    if isinstance(value, int) and not isinstance(value, bool) and value == target.port:
        return "<port>"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return normalise(str(value), target)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": [1]}}`` -> ``{"a.b.0": 1}``; empty containers stay as leaves."""
    out: dict[str, Any] = {}
    if isinstance(value, dict) and value:
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out[prefix] = [] if isinstance(value, list) else ({} if isinstance(value, dict) else value)
    return out


@dataclass(frozen=True)
class Difference:
    session: str
    path: str
    kafka: Any
    kafkapy: Any

    def __str__(self) -> str:
        return (f"{self.session} {self.path}: Kafka 4.4 {json.dumps(self.kafka)}, "
                f"kafkapy {json.dumps(self.kafkapy)}")

    def as_known(self) -> str:
        """The known_differences.py entry this difference would need (reason to be written)."""
        return (f"    Known({self.session!r}, {self.path!r},\n"
                f"          {self.kafka!r}, {self.kafkapy!r}, REASON),")


def compare(session: str, kafka: Any, kafkapy: Any) -> list[Difference]:
    """Every key path where the normalised observations differ (a path one side lacks has
    the value ``<absent>`` there)."""
    a, b = flatten(kafka), flatten(kafkapy)
    return [Difference(session, path, a.get(path, ABSENT), b.get(path, ABSENT))
            for path in sorted(set(a) | set(b)) if a.get(path, ABSENT) != b.get(path, ABSENT)]


@dataclass
class Outcome:
    session: str
    observations: int
    known: list[Difference] = field(default_factory=list)
    unknown: list[Difference] = field(default_factory=list)
    gone: list[Known] = field(default_factory=list)


class Differential:
    """Runs sessions on both brokers, checks them against the known list, keeps the counts."""

    def __init__(self, kafka: Target, kafkapy: Target, known: Iterable[Known] = KNOWN) -> None:
        self.kafka = kafka
        self.kafkapy = kafkapy
        self.known = list(known)
        self.outcomes: list[Outcome] = []

    def run(self, name: str, session: Session) -> Outcome:
        kafka = normalise(session(self.kafka), self.kafka)
        kafkapy = normalise(session(self.kafkapy), self.kafkapy)
        return self.judge(name, kafka, kafkapy)

    def judge(self, name: str, kafka: Any, kafkapy: Any) -> Outcome:
        observed = flatten(kafka)
        diffs = compare(name, kafka, kafkapy)
        listed = {(k.path): k for k in self.known if k.session == name}
        outcome = Outcome(name, len(set(observed) | set(flatten(kafkapy))))
        seen: set[str] = set()
        for d in diffs:
            entry = listed.get(d.path)
            if entry is not None and entry.kafka == d.kafka and entry.kafkapy == d.kafkapy:
                outcome.known.append(d)
                seen.add(d.path)
            else:
                outcome.unknown.append(d)
        outcome.gone = [k for path, k in listed.items() if path not in seen]
        self.outcomes.append(outcome)
        return outcome

    def check(self, name: str, session: Session) -> Outcome:
        """Run and assert: no unknown difference, no listed difference that is gone."""
        outcome = self.run(name, session)
        dump = os.environ.get(DUMP_ENV)
        if dump and (outcome.unknown or outcome.gone):
            with open(dump, "a") as f:
                for d in outcome.unknown:
                    f.write(json.dumps([d.session, d.path, d.kafka, d.kafkapy]) + "\n")
                for k in outcome.gone:  # entries to remove
                    f.write(json.dumps(["<gone>", k.session, k.path]) + "\n")
        problems = []
        if outcome.unknown:
            problems.append("differences from Apache Kafka 4.4 not in known_differences.py:\n"
                            + "\n".join(f"  {d}" for d in outcome.unknown)
                            + "\nentries they would need:\n"
                            + "\n".join(d.as_known() for d in outcome.unknown))
        if outcome.gone:
            problems.append("listed differences that no longer occur (remove them from "
                            "known_differences.py and FINDINGS.md):\n"
                            + "\n".join(f"  {k.session} {k.path}" for k in outcome.gone))
        assert not problems, "\n".join(problems)
        return outcome

    def summary(self) -> list[str]:
        known = sum(len(o.known) for o in self.outcomes)
        unknown = sum(len(o.unknown) for o in self.outcomes)
        gone = sum(len(o.gone) for o in self.outcomes)
        lines = [f"differential (Apache Kafka 4.4 vs kafkapy): {len(self.outcomes)} sessions "
                 f"compared, {sum(o.observations for o in self.outcomes)} observations, "
                 f"{known + unknown} differences ({known} known, {unknown} unknown), "
                 f"{gone} listed differences no longer seen"]
        for o in self.outcomes:
            lines.append(f"  {o.session}: {o.observations} observations, {len(o.known)} known, "
                         f"{len(o.unknown)} unknown, {len(o.gone)} gone")
        return lines
