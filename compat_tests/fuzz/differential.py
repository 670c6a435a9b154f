"""Differential fuzzing: the same cases sent to kafkapy and to Apache Kafka, what each did compared.

The cases are the wire fuzzer's (runner.make_case: valid requests of every (API, version) built
from the schemas, then mutated or carrying damaged record batches), so many of each version both
brokers advertise, each seeded by its API and version (a newly served API adds its own cases and
changes no other). Each case goes to both brokers on a connection of its own, one broker
after the other, and each broker's answer is reduced to an `Observation`: whether it answered,
closed the connection or kept it waiting, and the set of error codes in its response (decoded
with the response schema of the request's API and version). A `Difference` is a case where the
two observations differ; `signature()` names its kind without the random payload, so that a run's
differences can be counted, listed and compared with the ones FINDINGS.md explains.

Apache Kafka decides: a difference is kafkapy's to fix, or to explain in FINDINGS.md.
"""

from __future__ import annotations

import collections
import dataclasses
import random
import struct
from dataclasses import dataclass
from typing import Any

from kio.index import load_response_schema
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.serial import entity_reader

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.headers import is_flexible

from ..rawclient import RawClient
from .generate import RequestGenerator, Targets
from .runner import Case, exchange, make_case

API_VERSIONS_KEY = 18
API_NAMES = {r.key: name for name, r in served_apis().items()}


@dataclass(frozen=True)
class Observation:
    """What a client sees of one case: 'answered', 'closed' or 'waiting' (nothing within the
    timeout: a long poll or a hang), and the error codes of an answer (empty if undecodable)."""

    outcome: str
    error_codes: tuple[int, ...] = ()
    decoded: bool = True


@dataclass
class Difference:
    case: Case
    kafkapy: Observation
    kafka: Observation

    def signature(self) -> str:
        """The difference without its payload: API, version, case kind and both observations."""
        api = API_NAMES.get(self.case.api_key, str(self.case.api_key))
        kind = "valid" if self.case.kind == "valid" else self.case.kind
        return (f"{api} v{self.case.version} {kind}: kafkapy {_show(self.kafkapy)} / "
                f"kafka {_show(self.kafka)}")

    @property
    def connection(self) -> bool:
        """The connection's fate differs (answered on one broker, closed or left waiting on the
        other): what makes a client retry, reconnect or hang."""
        return self.kafkapy.outcome != self.kafka.outcome


def _show(o: Observation) -> str:
    if o.outcome != "answered":
        return o.outcome
    return f"answered {list(o.error_codes)}" if o.decoded else "answered (undecodable)"


def advertised(bootstrap: str) -> dict[int, tuple[int, int]]:
    """The (min, max) version per API key that a broker's ApiVersions advertises."""
    with RawClient(bootstrap) as c:
        resp = c.request(ApiVersionsRequest(client_software_name="differential",
                                            client_software_version="1"))
    return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


def common_versions(a: dict[int, tuple[int, int]],
                    b: dict[int, tuple[int, int]]) -> list[tuple[str, int, int]]:
    """(name, key, version) for every version both brokers advertise and kafkapy accepts (it
    advertises Produce from v0, as Kafka does, but serves it from v3; the generator's SERVED
    format)."""
    served = {r.key: r for r in served_apis().values()}
    out = []
    for key in sorted(set(a) & set(b)):
        if key not in API_NAMES:
            continue
        lo = max(a[key][0], b[key][0], served[key].accept_min)
        hi = min(a[key][1], b[key][1], served[key].max_version)
        out.extend((API_NAMES[key], key, v) for v in range(lo, hi + 1))
    return out


def error_codes(value: Any) -> tuple[int, ...]:
    """Every error code in a decoded response, sorted and without repeats."""
    found: set[int] = set()

    def walk(v: Any) -> None:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                item = getattr(v, f.name)
                if f.name == "error_code" and item is not None:
                    found.add(int(item))
                else:
                    walk(item)
        elif isinstance(v, tuple | list):
            for item in v:
                walk(item)

    walk(value)
    return tuple(sorted(found))


def decode(case: Case, frame: bytes) -> Observation:
    """An answered case's observation from its response frame (size prefix removed)."""
    pos = 4  # correlation id
    if is_flexible(case.api_key, case.version) and case.api_key != API_VERSIONS_KEY:
        pos += 1  # response header v1: an empty tagged-field section
    try:
        schema = load_response_schema(case.api_key, case.version)
        value, _ = entity_reader(schema)(frame, pos)
    except Exception:  # a v0 ApiVersions error reply to another version, for one
        if case.api_key == API_VERSIONS_KEY and len(frame) >= 6:
            return Observation("answered", (struct.unpack_from(">h", frame, 4)[0],))
        return Observation("answered", decoded=False)
    return Observation("answered", error_codes(value))


def observe(bootstrap: str, case: Case, timeout: float) -> Observation:
    """Send one case on a connection of its own (as the wire fuzzer does) and reduce what comes
    back to an Observation."""
    outcome, frame = exchange(bootstrap, case, timeout)
    return decode(case, frame) if outcome == "answered" else Observation(outcome)


@dataclass
class DifferentialReport:
    seed: str
    cases: int = 0
    same: int = 0
    differences: list[Difference] = dataclasses.field(default_factory=list)

    def by_signature(self) -> collections.Counter[str]:
        return collections.Counter(d.signature() for d in self.differences)

    def summary(self) -> str:
        connection = sum(1 for d in self.differences if d.connection)
        return (f"seed={self.seed} cases={self.cases} same={self.same} "
                f"differences={len(self.differences)} (connection {connection}, "
                f"error codes {len(self.differences) - connection}, "
                f"{len(self.by_signature())} kinds)")


def run(kafkapy_bootstrap: str, kafka_bootstrap: str, targets: Targets, seed: str,
        per_version: int = 1, *, timeout: float = 5.0,
        valid_rate: float = 0.5) -> DifferentialReport:
    """Send `per_version` seeded cases of every version both brokers serve to both brokers, one
    after the other, and compare. Each case's randomness is seeded by the seed, the API, the
    version and the case's number, so serving another API adds that API's cases and leaves every
    other case as it was."""
    versions = common_versions(advertised(kafkapy_bootstrap), advertised(kafka_bootstrap))
    report = DifferentialReport(seed)
    corr = 0
    for name, key, version in versions:
        for n in range(per_version):
            corr += 1
            rng = random.Random(f"{seed}:{name}:v{version}:{n}")
            case = make_case(rng, RequestGenerator(rng, targets), corr, valid_rate,
                             [(name, key, version)])
            ours = observe(kafkapy_bootstrap, case, timeout)
            theirs = observe(kafka_bootstrap, case, timeout)
            report.cases += 1
            if ours == theirs:
                report.same += 1
            else:
                report.differences.append(Difference(case, ours, theirs))
    return report
