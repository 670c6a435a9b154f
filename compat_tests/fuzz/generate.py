"""Valid requests of any (API, version), generated from kio's request schemas with a seeded RNG.

A request is valid when Kafka's own reader accepts it: every field present with a value of its
type, null only where the schema allows null. Values come from pools chosen by field name so that
requests reach the broker's real paths (the fuzz topic and its partitions, the fuzz group), mixed
with edge values: -1, 0, the type's extremes, empty strings, unknown names, null where legal.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import random
import struct
import typing
import uuid
from dataclasses import dataclass, field
from functools import cache
from types import NoneType, UnionType
from typing import Any, Union

from kio.index import load_request_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_writer

from kafkapy.protocol.api_table import served_apis
from kafkapy.protocol.headers import is_flexible
from kafkapy.protocol.record_batch import Record, encode_batch

INT_EDGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}

TOPIC_FIELDS = {"name", "topic", "topic_name", "topic_names", "resource_name", "entity_name"}
GROUP_FIELDS = {"group_id", "group_ids", "groups_names", "groups", "key", "coordinator_keys"}
PARTITION_FIELDS = {"partition", "partition_index", "index", "partitions", "partition_indexes"}
TIMEOUT_FIELDS = {"timeout", "max_wait", "rebalance_timeout", "session_timeout"}


@dataclass
class Targets:
    """Names and ids that exist on the broker under test (so requests reach real paths)."""

    topics: list[str] = field(default_factory=lambda: ["fuzz-topic"])
    topic_ids: list[uuid.UUID] = field(default_factory=list)
    partitions: int = 2
    groups: list[str] = field(default_factory=lambda: ["fuzz-group"])
    members: list[str] = field(default_factory=list)


def served_versions() -> list[tuple[str, int, int]]:
    """Every (API name, key, version) the broker serves, from protocol_specs/api_versions.json."""
    return [
        (name, r.key, v)
        for name, r in sorted(served_apis().items(), key=lambda kv: kv[1].key)
        for v in range(r.accept_min, r.max_version + 1)
    ]


def _split_optional(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) in (UnionType, Union):
        args = [a for a in typing.get_args(tp) if a is not NoneType]
        return args[0], True
    return tp, False


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


class RequestGenerator:
    """Builds random valid request entities; all randomness comes from ``rng``."""

    def __init__(
        self,
        rng: random.Random,
        targets: Targets | None = None,
        *,
        min_items: int = 0,
        null_rate: float = 0.2,
    ) -> None:
        self.rng = rng
        self.targets = targets or Targets()
        self.min_items = min_items  # fewest items in an array
        self.null_rate = null_rate  # how often a nullable value is null

    # -- scalar values -----------------------------------------------------------------------

    def _int(self, kafka_type: str, name: str) -> int:
        lo, hi = INT_EDGES[kafka_type]
        r = self.rng.random()
        if name in PARTITION_FIELDS and r < 0.6:
            return self.rng.randrange(self.targets.partitions)
        if r < 0.35:
            return self.rng.choice([v for v in (0, 1, -1, 2, 3) if lo <= v])  # (uint16: no -1)
        if r < 0.5:
            return self.rng.choice((lo, hi, lo + 1, hi - 1))
        if r < 0.8:
            return self.rng.randint(max(lo, -1000), min(hi, 1000))
        return self.rng.randint(lo, hi)

    def _string(self, name: str) -> str:
        r = self.rng.random()
        t = self.targets
        if name in TOPIC_FIELDS and r < 0.6:
            return self.rng.choice(t.topics)
        if name in GROUP_FIELDS and r < 0.6:
            return self.rng.choice(t.groups)
        if name == "member_id" and t.members and r < 0.5:
            return self.rng.choice(t.members)
        if r < 0.7:
            return self.rng.choice(("", "x", "fuzz", "consumer", "range", "__consumer_offsets"))
        alphabet = "abcdefghijklmnopqrstuvwxyz-._0123456789é\u2603"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randrange(1, 40)))

    def _records(self) -> bytes:
        r = self.rng.random()
        if r < 0.15:
            return b""
        if r < 0.25:
            return self.rng.randbytes(self.rng.randrange(1, 120))
        n = self.rng.randrange(1, 4)
        records = [
            Record(
                offset=i,
                timestamp=1_700_000_000_000 + i,
                key=self.rng.choice((None, b"k", self.rng.randbytes(8))),
                value=self.rng.randbytes(self.rng.randrange(0, 64)),
            )
            for i in range(n)
        ]
        return encode_batch(records, codec=self.rng.choice((0, 0, 0, 1, 2, 3, 4)))

    def _uuid(self, name: str) -> uuid.UUID:
        t = self.targets
        r = self.rng.random()
        if t.topic_ids and r < 0.6:
            return self.rng.choice(t.topic_ids)
        if r < 0.8:
            return uuid.UUID(int=0)
        return uuid.UUID(int=self.rng.getrandbits(128))

    def primitive(self, kafka_type: str, name: str) -> Any:
        if kafka_type in INT_EDGES:
            return self._int(kafka_type, name)
        if kafka_type == "bool":
            return self.rng.random() < 0.5
        if kafka_type == "string":
            return self._string(name)
        if kafka_type == "bytes":
            return self.rng.randbytes(self.rng.randrange(0, 24))
        if kafka_type == "records":
            return self._records()
        if kafka_type == "uuid":
            return self._uuid(name)
        if kafka_type == "timedelta_i32":
            ms = self.rng.choice((0, 1, 100, 1000, 30000, -1, 2**31 - 1))
            if name in TIMEOUT_FIELDS and self.rng.random() < 0.8:
                ms = self.rng.choice((0, 10, 100, 500))  # long waits would just slow the fuzzer
            elif name in TIMEOUT_FIELDS and ms == 1:
                ms = 0  # 1 ms races Kafka's controller queue: a timing case, not a behaviour
            return datetime.timedelta(milliseconds=ms)
        if kafka_type == "timedelta_i64":
            return datetime.timedelta(milliseconds=self.rng.choice((0, 1000, -1, 86_400_000)))
        if kafka_type == "error_code":  # (responses only)
            return ErrorCode(self.rng.choice((0, -1, 3, 6)))
        if kafka_type == "datetime_i64":  # (responses only)
            ms = 1_700_000_000_000 + self.rng.randrange(10**6)
            return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
        if kafka_type == "float64":
            return self.rng.choice((0.0, 1.5, -1.0, 1e300))
        raise ValueError(f"no generator for kafka type {kafka_type!r}")

    # -- structure ---------------------------------------------------------------------------

    def _count(self) -> int:
        return max(self.min_items, self.rng.choice((0, 1, 1, 1, 2, 2, 3)))

    def value(self, tp: Any, f: dataclasses.Field[Any], depth: int) -> Any:
        inner, nullable = _split_optional(tp)
        if nullable and self.rng.random() < self.null_rate:
            return None
        if typing.get_origin(inner) is tuple:
            item = typing.get_args(inner)[0]
            return tuple(self.value(item, f, depth + 1) for _ in range(self._count()))
        if dataclasses.is_dataclass(inner):
            return self.entity(inner, depth + 1)
        return self.primitive(f.metadata["kafka_type"], f.name)

    def entity(self, cls: type, depth: int = 0) -> Any:
        values = {}
        for f in dataclasses.fields(cls):
            values[f.name] = self.value(_hints(cls)[f.name], f, depth)
        return cls(**values)

    def request(self, api_key: int, version: int) -> Any:
        return self.entity(load_request_schema(api_key, version))


def encode_body(entity: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def request_header(
    api_key: int, version: int, correlation_id: int, client_id: str | None = "fuzzer"
) -> bytes:
    """Request header v1, or v2 (with its empty tagged-field section) for flexible versions."""
    head = struct.pack(">hhi", api_key, version, correlation_id)
    if client_id is None:
        head += b"\xff\xff"
    else:
        raw = client_id.encode()
        head += struct.pack(">h", len(raw)) + raw
    if is_flexible(api_key, version):
        head += b"\x00"
    return head


def encode_frame_payload(entity: Any, correlation_id: int) -> bytes:
    """Header and body of a request (without the 4-byte size prefix)."""
    return request_header(entity.__api_key__, entity.__version__, correlation_id) + encode_body(
        entity
    )
