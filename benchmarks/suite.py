"""The benchmark suite's (run.py's) settings, its results table and its broker: what every
section shares."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common import admin_of, parse_sections, progress, release_admin

from kafkapy.testing import BrokerProcess

MiB = 1024 * 1024
MB = 1e6
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
RESULTS = Path(__file__).resolve().parent / "results"  # run.py sets it from --results
LOG_APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}
SECTIONS = ("ceilings", "requests", "produce", "kafka-python", "fetch", "latency", "scale",
            "sessions", "cleaner", "cluster")


@dataclass
class Settings:
    quick: bool
    repeat: int
    produce_s: float  # duration of one produce run
    fetch_bytes: int  # size of the partition read by the fetch runs
    latency_s: float  # duration of one offered-load level
    commit_s: float
    ceiling_bytes: int
    data_dir: Path | None
    profile: bool
    sections: tuple[str, ...]

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Settings:
        only = parse_sections(a.only, SECTIONS)
        if a.quick:
            return cls(True, a.repeat or 2, 1.5, 512 * MiB, 2.5, 1.5, 1024 * MiB, a.data_dir,
                       a.profile, only)
        return cls(False, a.repeat or 3, 6.0, 2048 * MiB, 8.0, 5.0, 1024 * MiB, a.data_dir,
                   a.profile, only)


@dataclass
class Row:
    section: str
    name: str
    unit: str
    values: list[float] = field(default_factory=list)
    ceiling: str | None = None  # key of the row this one is compared to
    note: str = ""
    higher_is_better: bool = True


class Results:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.extra: dict[str, object] = {}

    def add(self, key: str, section: str, name: str, unit: str, value: float | None,
            ceiling: str | None = None, note: str = "", higher_is_better: bool = True) -> None:
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = Row(section, name, unit, [], ceiling, note, higher_is_better)
        if value is not None:
            row.values.append(float(value))

    def median(self, key: str) -> float | None:
        row = self.rows.get(key)
        return statistics.median(row.values) if row and row.values else None


@contextlib.contextmanager
def pinned_broker(
    root: Path, name: str, overrides: dict[str, str] | None = None
) -> Iterator[BrokerProcess]:
    """A running broker on the broker core with 1 GiB segments and one partition per topic by
    default, stopped (and its AdminClient released) when the block ends; ``.usage()`` gives its
    CPU and peak RSS (``measured``)."""
    ov = {"log.segment.bytes": str(1024 * MiB), "num.partitions": "1"}
    ov.update(overrides or {})
    with BrokerProcess(root / name, ov, cpu=BROKER_CPU) as broker:
        admin_of(broker)  # made before any timing starts, as a client's would be
        try:
            yield broker
        finally:
            release_admin(broker)


def guarded(res: Results, name: str, fn) -> None:
    """Run one section; a failure is reported (and kept in the JSON) and the suite goes on."""
    try:
        fn()
    except Exception as e:
        msg = f"{name}: {type(e).__name__}: {e}"
        progress(f"FAILED {msg}")
        res.extra.setdefault("errors", []).append(msg)  # type: ignore[union-attr]
