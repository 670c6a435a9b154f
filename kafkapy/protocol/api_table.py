"""The served API/version table, read from protocol_specs/api_versions.json.

One table decides what ApiVersions advertises and which versions dispatch accepts; an API appears
in ApiVersions only when a handler is registered for it (see kafkapy.server.registry).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from kafkapy.specs import spec_path

SPEC_PATH = spec_path("api_versions.json")


@dataclass(frozen=True, slots=True)
class ApiRange:
    name: str
    key: int
    min_version: int  # advertised minimum
    max_version: int  # advertised maximum
    accept_min: int  # lowest version actually accepted (>= min_version)

    def accepts(self, version: int) -> bool:
        return self.accept_min <= version <= self.max_version

    def advertises(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


@cache
def served_apis() -> dict[str, ApiRange]:
    """The spec's table, by API name."""
    spec = json.loads(SPEC_PATH.read_text())
    table: dict[str, ApiRange] = {}
    for name, entry in spec["apis"].items():
        table[name] = ApiRange(
            name=name,
            key=entry["key"],
            min_version=entry["min"],
            max_version=entry["max"],
            accept_min=entry.get("accept_min", entry["min"]),
        )
    return table


def release_line() -> str:
    """The Apache Kafka release whose version ranges are served."""
    return str(json.loads(SPEC_PATH.read_text())["release"])
