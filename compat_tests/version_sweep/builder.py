"""Requests built generically from kio's schema for an API version: fields filled by the
test's spec, then kio's defaults, then by field name (topic names point at "sweep", topic ids at
its real id, ...), then by kafka_type."""

from __future__ import annotations

import dataclasses
import datetime
import typing
from functools import cache
from typing import Any

from kio.index import load_request_schema

from kafkapy.protocol.api_table import served_apis

from .env import SWEEP, ZERO_UUID, Env


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _entity_in(hint: Any) -> tuple[type | None, bool]:
    """(entity class, is a tuple of them) for a field's type hint, or (None, False)."""
    if dataclasses.is_dataclass(hint):
        return hint, False
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and args and dataclasses.is_dataclass(args[0]):
        return args[0], True
    for a in args:  # X | None, tuple[X, ...] | None
        cls, many = _entity_in(a)
        if cls is not None:
            return cls, many
    return None, False


def _nullable(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


_BY_TYPE: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "float64": 0.0,
    "bool": False,
    "string": SWEEP,
    "timedelta_i32": datetime.timedelta(seconds=5),
    "timedelta_i64": datetime.timedelta(seconds=5),
    "datetime_i64": None,
    "uuid": ZERO_UUID,
    "bytes": b"",
    "records": None,
}


def by_name(env: Env) -> dict[str, Any]:
    """Values for fields (at any depth) that have no kio default, by field name."""
    return {
        "name": SWEEP,
        "topic": SWEEP,
        "topic_names": (SWEEP,),
        "resource_name": SWEEP,
        "resource_type": 2,
        "topic_id": env.topic_id,
        "transactional_id": None,
        "partition_index": 0,
        "partition": 0,
        "index": 0,
        "replica_id": -1,
        "acks": -1,
        "timestamp": -1,
        "leader_epoch": 0,
        "fetch_offset": 0,
        "partition_max_bytes": 1 << 20,
        "min_bytes": 1,
        "max_wait": datetime.timedelta(milliseconds=100),
        "timeout": datetime.timedelta(seconds=10),
        "transaction_timeout": datetime.timedelta(seconds=60),
        "num_partitions": 1,
        "replication_factor": 1,
        "count": 1,
        "isolation_level": 0,
        "forgotten_topics_data": [],
        "assignments": [],
        "configs": [],
        "client_software_name": "kafkapy-sweep",
        "client_software_version": "1.0",
    }


_MISSING = object()


def _has_default(f: dataclasses.Field) -> bool:
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


def build(cls: type, spec: dict[str, Any], env: Env, path: str = "") -> Any:
    """Fill the dataclass `cls`: spec (by dotted path, then by bare name, at any depth), then
    kio's default, then by_name(), then a value for the field's kafka_type. A nested entity list
    given as a list of dicts builds one element per dict (each dict overriding the spec below it);
    left unspecified it gets one element from defaults."""
    names = by_name(env)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        hint = _hints(cls)[f.name]
        key = path + f.name
        val = spec.get(key, spec.get(f.name, _MISSING))
        entity, many = _entity_in(hint)
        if entity is not None:
            if val is _MISSING:
                if _has_default(f):
                    continue
                val = names.get(f.name, [{}] if many else {})
            if val is None:
                kwargs[f.name] = None
            elif many:
                items = val if isinstance(val, list | tuple) else [val]
                kwargs[f.name] = tuple(
                    item
                    if dataclasses.is_dataclass(item)
                    else build(entity, {**spec, **item}, env, key + ".")
                    for item in items
                )
            else:
                kwargs[f.name] = (
                    val
                    if dataclasses.is_dataclass(val)
                    else build(entity, {**spec, **val}, env, key + ".")
                )
            continue
        if val is _MISSING:
            if _has_default(f):
                continue
            if f.name in names:
                val = names[f.name]
            elif _nullable(hint):
                val = None
            else:
                val = _BY_TYPE[f.metadata["kafka_type"]]
        kwargs[f.name] = val
    return cls(**kwargs)


def make(api: str, version: int, env: Env, **spec: Any) -> Any:
    cls = load_request_schema(served_apis()[api].key, version)
    return build(cls, spec, env)
