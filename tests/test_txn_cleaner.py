"""The log cleaner and transactions: aborted data removed whatever its keys, committed data
compacted as usual, markers kept while their data is there and removed after a delete horizon,
the cleaned segments' .txnindex, and no cleaning past the last stable offset."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage.cleaner import LogCleaner, cleanable_offsets
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.log_manager import LogManager
from kafkapy.storage.producer_state import SKIP_VERIFICATION

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
T0 = 1_700_000_000_000
DAY = 86_400_000


def cfg() -> LogConfig:
    return LogConfig(
        segment_bytes=10**6,
        cleanup_policy=("compact",),
        min_cleanable_dirty_ratio=0.01,
        file_delete_delay_ms=0,
        delete_retention_ms=DAY,
    )


@pytest.fixture
def manager(tmp_path: Path):
    mgr = LogManager([tmp_path], LogConfig())
    mgr.startup(0, "cluster")
    yield mgr
    if mgr.logs:
        mgr.shutdown()


def put(log: PartitionLog, key: bytes, value: bytes | None, pid: int = -1, seq: int = -1):
    data = encode_batch(
        [Record(0, T0, key, value, [])],
        producer_id=pid,
        producer_epoch=0 if pid >= 0 else -1,
        base_sequence=seq,
        is_transactional=pid >= 0,
    )
    log.append_as_leader(data, leader_epoch=0, now_ms=T0, verification_guard=SKIP_VERIFICATION)


def end(log: PartitionLog, pid: int, committed: bool) -> None:
    log.append_end_txn_marker(pid, 0, 0, committed, leader_epoch=0, now_ms=T0)


def batches(log: PartitionLog):
    out = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read_bytes(offset, 10**8)
        for pos, h in iter_batches(data):
            out.append((h, data[pos : pos + h.size]))
            offset = h.next_offset
    return out


def records(log: PartitionLog) -> list[tuple[int, bytes, bytes | None]]:
    return [
        (r.offset, r.key, r.value)
        for h, data in batches(log)
        if not h.is_control
        for r in decode_records(data)
    ]


def markers(log: PartitionLog) -> list[tuple[int, int]]:
    return [(h.base_offset, h.producer_id) for h, _ in batches(log) if h.is_control]


def test_aborted_records_go_and_do_not_shadow_committed_values(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    put(log, b"a", b"v1")  # 0
    put(log, b"a", b"aborted", pid=1, seq=0)  # 1
    put(log, b"b", b"committed", pid=2, seq=0)  # 2
    end(log, 1, committed=False)  # 3
    end(log, 2, committed=True)  # 4
    log.roll(T0)
    put(log, b"z", b"z")  # 5: the active segment
    LogCleaner(manager).clean_all(T0)
    # "a" keeps its committed value although a later (aborted) record had the same key
    assert records(log) == [(0, b"a", b"v1"), (2, b"b", b"committed"), (5, b"z", b"z")]
    hs = {h.base_offset: h for h, _ in batches(log)}
    # producer 1's last batch stays as an empty shell (its epoch and sequence), so its abort
    # marker and index entry stay too
    assert hs[1].records_count == 0 and hs[1].producer_id == 1
    assert markers(log) == [(3, 1), (4, 2)]
    entries = [
        (e.producer_id, e.first_offset, e.last_offset) for e in log.segments[0].txn_index.entries()
    ]
    assert entries == [(1, 1, 3)]
    # read_committed still reports it, and the data is gone anyway
    data, aborted = log.read_committed(0, 10**6)
    assert [(a.producer_id, a.first_offset) for a in aborted] == [(1, 1)]


def test_markers_go_after_their_data_and_a_delete_horizon(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    put(log, b"k", b"txn", pid=1, seq=0)  # 0
    end(log, 1, committed=True)  # 1
    put(log, b"k", b"newer")  # 2: supersedes the transaction's record
    put(log, b"x", b"later", pid=1, seq=1)  # 3: producer 1's last data is elsewhere now
    end(log, 1, committed=True)  # 4
    log.roll(T0)
    cleaner = LogCleaner(manager)
    cleaner.clean_all(T0)
    # pass 1: the superseded record goes; its commit marker stays (its batch was seen)
    assert [o for o, _, _ in records(log)] == [2, 3]
    assert [o for o, _ in markers(log)] == [1, 4]
    put(log, b"y", b"dirty")  # more dirty data for another pass
    log.roll(T0)
    cleaner.clean_all(T0)
    # pass 2: marker 1 has no data left: it is stamped with a delete horizon, still there
    first = [h for h, _ in batches(log) if h.base_offset == 1][0]
    assert first.is_control and first.delete_horizon_ms == T0 + DAY
    put(log, b"w", b"dirty")
    log.roll(T0)
    cleaner.clean_all(T0 + DAY + 1)
    # pass 3, past the horizon: marker 1 is gone; marker 4 (its data, offset 3, remains) stays
    assert [o for o, _ in markers(log)] == [4]


def test_cleaning_stops_at_the_last_stable_offset(manager: LogManager) -> None:
    log = manager.create_log("t", 0, TID, cfg())
    put(log, b"a", b"1")  # 0
    put(log, b"a", b"open", pid=1, seq=0)  # 1: stays open
    log.roll(T0)
    put(log, b"a", b"3")  # 2
    log.roll(T0)
    put(log, b"a", b"4")  # 3
    assert log.last_stable_offset == 1
    c = cleanable_offsets(log, None, T0)
    assert c.first_uncleanable == 1
    LogCleaner(manager).clean_all(T0)
    assert [o for o, _, _ in records(log)] == [0, 1, 2, 3]  # nothing cleaned past offset 1
    end(log, 1, committed=False)  # 4
    log.roll(T0)
    LogCleaner(manager).clean_all(T0)
    assert records(log) == [(3, b"a", b"4")]
