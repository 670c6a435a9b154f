"""What the log cleaner benchmark's (cleaner.py's) sections share: settings, the results table,
the record shape (1 KiB values, 10 % distinct keys) and its constants."""

from __future__ import annotations

import argparse
import os
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from common import parse_sections
from common import progress as common_progress

MiB = 1024 * 1024
MB = 1e6
CLIENT_CPU = 0
BROKER_CPU = 1 if (os.cpu_count() or 1) >= 2 else 0
RESULTS = Path(__file__).resolve().parent / "results"
SECTIONS = ("inprocess", "broker")
VALUE_SIZE = 1024
UNIQUE_FRACTION = 0.10
SEGMENT_BYTES = 16 * MiB
NEVER_MS = 2**62  # min.compaction.lag.ms that keeps every segment uncleanable


@dataclass
class Settings:
    quick: bool
    repeat: int
    inprocess_mb: int  # value bytes written to the in-process log, per codec
    batch_records: int
    codecs: tuple[str, ...]
    ceiling_bytes: int
    broker_dirty_mb: int  # value bytes of dirty data in the compacted topic
    dirty_partitions: int
    produce_s: float
    data_dir: Path | None
    output: Path
    sections: tuple[str, ...]

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> Settings:
        only = parse_sections(a.only, SECTIONS)
        if a.quick:
            d = dict(repeat=3, mb=96, ceiling=256 * MiB, dirty=640, parts=2, seconds=4.0)
        else:
            d = dict(repeat=3, mb=200, ceiling=512 * MiB, dirty=1280, parts=4, seconds=8.0)
        return cls(
            quick=a.quick,
            repeat=a.repeat or d["repeat"],
            inprocess_mb=a.mb or d["mb"],
            batch_records=a.batch_records,
            codecs=tuple(a.codecs.split(",")),
            ceiling_bytes=d["ceiling"],
            broker_dirty_mb=a.dirty_mb or d["dirty"],
            dirty_partitions=d["parts"],
            produce_s=a.seconds or d["seconds"],
            data_dir=a.data_dir,
            output=a.output,
            sections=only,
        )


@dataclass
class Row:
    section: str
    name: str
    unit: str
    values: list[float] = field(default_factory=list)
    note: str = ""


class Results:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.notes: list[str] = []
        self.samples: list[dict] = []

    def add(
        self, key: str, section: str, name: str, unit: str, value: float | None, note: str = ""
    ) -> None:
        row = self.rows.setdefault(key, Row(section, name, unit, [], note))
        if value is not None:
            row.values.append(float(value))

    def median(self, key: str) -> float | None:
        row = self.rows.get(key)
        return statistics.median(row.values) if row and row.values else None


def progress(msg: str) -> None:
    common_progress(msg, "cleaner-bench")


def make_values(n: int = 64) -> list[bytes]:
    """1 KiB values, half random and half text: lz4 gets them to ~55 %, as real payloads."""
    rng = random.Random(7)
    text = b"kafkapy log cleaner benchmark, the latest value per key wins. " * 20
    return [rng.randbytes(VALUE_SIZE // 2) + text[: VALUE_SIZE - VALUE_SIZE // 2] for _ in range(n)]


def key_sequence(records: int, seed: int = 1) -> tuple[list[int], int]:
    """Key index of each record (uniform over records * UNIQUE_FRACTION keys), key count."""
    nkeys = max(1, int(records * UNIQUE_FRACTION))
    rng = random.Random(seed)
    return [rng.randrange(nkeys) for _ in range(records)], nkeys


def key_bytes(i: int) -> bytes:
    return b"key-%09d" % i
