"""What handlers return, and how it becomes bytes.

A handler returns a kio response entity (encoded with kio's writer), a `RawResponse` whose parts
are bytes and file regions (the Fetch path, sent with os.sendfile), or `NO_RESPONSE` (Produce with
acks=0). `build` constructs a kio entity of whatever version the request had, dropping values for
fields that version does not have, so handlers can be written once for all versions.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from kio.index import load_payload_module
from kio.serial import entity_writer
from kio.static.constants import EntityType

from kafkapy.storage.file_region import FileRegion


@dataclass(slots=True)
class RawResponse:
    """A response body assembled by hand: bytes and file regions, in order."""

    parts: list[bytes | FileRegion] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(p.length if isinstance(p, FileRegion) else len(p) for p in self.parts)


class _NoResponse:
    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE: Any = _NoResponse()


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def build(cls: type, **values: Any) -> Any:
    """Instantiate a kio entity with the values its version has; others are dropped."""
    names = _field_names(cls)
    return cls(**{k: v for k, v in values.items() if k in names})


def has_field(cls: type, name: str) -> bool:
    return name in _field_names(cls)


def encode_entity(entity: Any) -> bytes:
    """Encode a kio entity's body (without header)."""
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


@cache
def response_module(api_key: int, version: int) -> ModuleType:
    """The kio module holding the response entities of one API version."""
    return load_payload_module(api_key, version, EntityType.response)


THROTTLE_NONE = datetime.timedelta(0)
