"""Time to open one partition log with many segments (Kafka loads segment indexes lazily).

    .venv/bin/python benchmarks/log_open.py [--segments 2000] [--batches 4] [--repeats 7]

Writes a log of ``--segments`` small segments (``--batches`` batches each, an index entry per
batch) once, closes it cleanly, then opens it ``--repeats`` times: after a clean shutdown
(``recover=False``), and as after an unclean one with everything flushed (``recover=True`` at
the log end: only the last segment is recovered). Prints the median and minimum wall time of
each in milliseconds, the median CPU time (user+sys of this process: the steadier figure on a
shared machine), and how many segments have their indexes read once the log is open. Page cache
warm: the figure is the cost of opening, not the disk's.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from kafkapy.protocol.record_batch import Record, encode_batch
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog

TOPIC_ID = uuid.UUID(int=7)
NOW_MS = 1_700_000_000_000


def write_log(root: Path, segments: int, batches: int) -> tuple[LogConfig, int]:
    """A log of ``segments`` segments of ``batches`` batches; returns its config and end."""
    batch = encode_batch([Record(0, NOW_MS, b"k", bytes(100), []) for _ in range(5)])
    config = LogConfig(segment_bytes=len(batch) * batches, index_interval_bytes=0)
    log = PartitionLog.open(root, "t", 0, TOPIC_ID, config, recover=False)
    for _ in range(segments * batches):
        log.append_as_leader(batch, leader_epoch=0, now_ms=NOW_MS)
    end = log.log_end_offset
    assert len(log.segments) == segments, len(log.segments)
    log.flush()
    log.close()
    return config, end


def time_open(
    root: Path, config: LogConfig, end: int, *, recover: bool
) -> tuple[float, float, int]:
    """Wall and CPU seconds to open the log, and how many of its segments have their indexes
    loaded."""
    started, cpu_started = time.perf_counter(), time.process_time()
    log = PartitionLog.open(
        root, "t", 0, TOPIC_ID, config, recover=recover, recovery_point=end
    )
    took, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    loaded = sum(1 for s in log.segments if getattr(s, "indexes_loaded", True))
    log.close()
    return took, cpu, loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config, end = write_log(root, args.segments, args.batches)
        print(f"{args.segments} segments, {end} offsets, {args.batches} batches per segment")
        for recover in (False, True):
            walls, cpus, loaded = [], [], 0
            for _ in range(args.repeats):
                took, cpu, loaded = time_open(root, config, end, recover=recover)
                walls.append(took * 1000)
                cpus.append(cpu * 1000)
            label = "unclean (recover)" if recover else "clean shutdown"
            print(
                f"open, {label:17}: wall median {statistics.median(walls):7.1f} ms, "
                f"min {min(walls):7.1f} ms; CPU median {statistics.median(cpus):7.1f} ms; "
                f"segments with indexes read: {loaded}"
            )


if __name__ == "__main__":
    main()
