"""Transactions in a partition log: control batches, producer transaction state, the last stable
offset, the .txnindex, read_committed reads, KIP-890 guards, recovery and truncation."""

from __future__ import annotations

import struct
import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.control_batch import (
    EndTxnMarker,
    encode_end_txn_marker,
    marker_of_batch,
)
from kafkapy.protocol.record_batch import (
    CONTROL_BIT,
    TRANSACTIONAL_BIT,
    Record,
    decode_records,
    encode_batch,
    iter_batches,
    parse_batch_header,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.producer_state import SKIP_VERIFICATION

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
T0 = 1_700_000_000_000


def open_log(tmp: Path, recover: bool = False, **cfg) -> PartitionLog:
    return PartitionLog.open(tmp, "t", 0, TID, LogConfig(**cfg), recover=recover)


def txn_batch(pid: int, seq: int, n: int = 2, epoch: int = 0, tag: str = "v") -> bytes:
    rs = [Record(0, T0 + i, None, f"{tag}{i}".encode(), []) for i in range(n)]
    return encode_batch(
        rs, producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True
    )


def plain_batch(n: int = 1, pid: int = -1, seq: int = -1) -> bytes:
    rs = [Record(0, T0 + i, None, b"p", []) for i in range(n)]
    return encode_batch(
        rs, producer_id=pid, producer_epoch=0 if pid >= 0 else -1, base_sequence=seq
    )


def append(log: PartitionLog, data: bytes, guard=SKIP_VERIFICATION):
    return log.append_as_leader(data, leader_epoch=0, now_ms=T0, verification_guard=guard)


def end(log: PartitionLog, pid: int, committed: bool, epoch: int = 0, coord: int = 0):
    return log.append_end_txn_marker(pid, epoch, coord, committed, leader_epoch=0, now_ms=T0)


def batches(log: PartitionLog):
    out = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:  # each read returns one segment's batches
        data = log.read_bytes(offset, 10**7)
        for pos, h in iter_batches(data):
            out.append((h, data[pos : pos + h.size]))
            offset = h.next_offset
    return out


# ---- control batches ---------------------------------------------------------------------


def test_end_txn_marker_batch_layout() -> None:
    raw = encode_end_txn_marker(7, 3, 11, committed=True, timestamp_ms=T0)
    h = parse_batch_header(raw)
    assert h.attributes & CONTROL_BIT and h.attributes & TRANSACTIONAL_BIT
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (7, 3, -1, 1)
    (r,) = decode_records(raw)
    # key: version 0, type 1 (COMMIT); value: version 0, coordinator epoch 11
    assert r.key == struct.pack(">hh", 0, 1)
    assert r.value == struct.pack(">hi", 0, 11)
    assert marker_of_batch(raw) == EndTxnMarker(True, 11)
    abort = encode_end_txn_marker(7, 3, 2, committed=False, timestamp_ms=T0)
    assert decode_records(abort)[0].key == struct.pack(">hh", 0, 0)
    assert marker_of_batch(abort) == EndTxnMarker(False, 2)


def test_clients_cannot_write_control_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(Exception, match="control"):
        append(log, bytes(encode_end_txn_marker(1, 0, 0, True, T0)))
    log.close()


# ---- producer transaction state and the LSO -----------------------------------------------


def test_lso_stops_at_open_transaction_and_moves_after_marker(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, plain_batch())  # 0
    append(log, txn_batch(1, 0, n=2))  # 1-2
    append(log, plain_batch())  # 3
    assert log.high_watermark == 4
    assert log.last_stable_offset == 1
    entry = log.producer_state.producers[1]
    assert entry.current_txn_first_offset == 1
    r = end(log, 1, committed=True, coord=5)  # 4
    assert (r.base_offset, r.last_offset) == (4, 4)
    assert log.last_stable_offset == 5 == log.high_watermark
    assert entry.current_txn_first_offset == -1 and entry.coordinator_epoch == 5
    assert not log.segments[-1].txn_index.exists  # commits are not indexed
    log.close()


def test_lso_waits_for_the_marker_to_be_replicated(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.auto_high_watermark = False  # a leader with followers moves the HW itself
    append(log, txn_batch(1, 0))  # 0-1
    end(log, 1, committed=False)  # 2
    log.high_watermark = 2  # the marker is not replicated yet
    assert log.last_stable_offset == 0
    log.high_watermark = 3
    assert log.last_stable_offset == 3
    log.close()


def test_abort_is_indexed_with_the_lso_of_its_time(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0))  # 0-1 producer 1
    append(log, txn_batch(2, 0))  # 2-3 producer 2
    end(log, 2, committed=False)  # 4: aborts producer 2; producer 1 still open at 0
    end(log, 1, committed=False)  # 5
    entries = log.segments[-1].txn_index.entries()
    assert [
        (e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries
    ] == [
        (2, 2, 4, 0),
        (1, 0, 5, 6),
    ]
    raw = (tmp_path / "t-0" / "00000000000000000000.txnindex").read_bytes()
    assert len(raw) == 68
    assert raw[:34] == struct.pack(">hqqqq", 0, 2, 2, 4, 0)
    log.close()


def test_plain_write_during_open_transaction_is_invalid_txn_state(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0, n=2))
    with pytest.raises(InvalidTxnStateError):
        append(log, plain_batch(pid=1, seq=2))
    assert log.log_end_offset == 2
    log.close()


def test_markers_check_producer_and_coordinator_epochs(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0, epoch=3))
    end(log, 1, committed=True, epoch=3, coord=4)
    with pytest.raises(TransactionCoordinatorFencedError):
        end(log, 1, committed=False, epoch=3, coord=3)
    with pytest.raises(InvalidProducerEpochError):
        end(log, 1, committed=False, epoch=2, coord=4)
    end(log, 1, committed=False, epoch=4, coord=4)  # a bumped epoch (fencing abort) is fine
    assert log.producer_state.producers[1].epoch == 4
    log.close()


def test_marker_without_open_transaction_completes_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    end(log, 9, committed=False)
    assert log.log_end_offset == 1 and log.last_stable_offset == 1
    assert not log.segments[-1].txn_index.exists
    log.close()


# ---- KIP-890 verification guards ----------------------------------------------------------


def test_first_transactional_write_needs_its_verification_guard(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(InvalidTxnStateError):
        append(log, txn_batch(1, 0), guard=None)
    guard = log.producer_state.start_verification(1, 0, 0)
    with pytest.raises(InvalidTxnStateError):
        append(log, txn_batch(1, 0), guard=object())  # another verification's guard
    append(log, txn_batch(1, 0), guard=guard)
    # the transaction is open here now: later batches need no guard
    assert log.producer_state.start_verification(1, 2, 0) is None
    append(log, txn_batch(1, 2), guard=None)
    log.close()


def test_guard_is_void_once_a_marker_was_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    stale = log.producer_state.start_verification(1, 0, 0)
    end(log, 1, committed=False)  # e.g. the coordinator aborted meanwhile
    with pytest.raises(InvalidTxnStateError):
        append(log, txn_batch(1, 0), guard=stale)
    log.close()


def test_a_write_of_the_next_epoch_is_verified_while_the_previous_transaction_is_open(
    tmp_path: Path,
) -> None:
    """Transactions version 2: the commit bumps the epoch, and the producer's first write of its
    next transaction may reach the partition before the commit's marker: it is not part of
    the open (previous) transaction, so it needs its own verification."""
    log = open_log(tmp_path)
    guard = log.producer_state.start_verification(1, 0, 0)
    append(log, txn_batch(1, 0), guard=guard)  # the transaction of epoch 0
    assert log.producer_state.start_verification(1, 0, 1) is not None
    with pytest.raises(InvalidTxnStateError):
        append(log, txn_batch(1, 0, epoch=1), guard=None)
    log.close()


def test_a_version_2_marker_must_be_above_the_data_epoch(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0, epoch=3))
    with pytest.raises(InvalidProducerEpochError):
        log.append_end_txn_marker(
            1, 3, 0, True, leader_epoch=0, now_ms=T0, transaction_version=2
        )
    log.append_end_txn_marker(1, 4, 0, True, leader_epoch=0, now_ms=T0, transaction_version=2)
    # a retry of the written marker closes nothing and is not refused
    log.append_end_txn_marker(1, 4, 0, True, leader_epoch=0, now_ms=T0, transaction_version=2)
    log.close()


# ---- read_committed -------------------------------------------------------------------------


def test_read_committed_stops_at_lso_and_reports_overlapping_aborts(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0))  # 0-1
    end(log, 1, committed=False)  # 2
    append(log, plain_batch())  # 3
    append(log, txn_batch(2, 0))  # 4-5, open
    data, aborted = log.read_committed(0, 10**6)
    assert data.size == sum(h.size for h, _ in batches(log)[:3])
    assert [(a.producer_id, a.first_offset) for a in aborted] == [(1, 0)]
    # a fetch starting after the aborted transaction gets no entry
    _, aborted = log.read_committed(3, 10**6)
    assert aborted == []
    # nothing past the LSO
    data, _ = log.read_committed(4, 10**6)
    assert data.size == 0
    log.close()


def test_read_committed_aborts_bounded_by_the_data_returned(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, plain_batch())  # 0
    append(log, txn_batch(1, 0))  # 1-2
    end(log, 1, committed=False)  # 3
    one = batches(log)[0][0].size
    data, aborted = log.read_committed(0, one, min_one_batch=True)
    assert data.size == one and aborted == []  # only offset 0 returned
    log.close()


def test_aborts_are_found_across_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0))  # 0-1
    log.roll()
    append(log, plain_batch())  # 2
    end(log, 1, committed=False)  # 3, in segment 2
    assert (tmp_path / "t-0" / "00000000000000000002.txnindex").exists()
    assert not (tmp_path / "t-0" / "00000000000000000000.txnindex").exists()
    _, aborted = log.read_committed(0, 10**6)
    assert [(a.producer_id, a.first_offset) for a in aborted] == [(1, 0)]
    log.close()


# ---- persistence: snapshots, recovery, truncation, retention -----------------------------


def state_of(log: PartitionLog):
    ps = log.producer_state
    return (
        {
            pid: (e.epoch, e.last_seq, e.coordinator_epoch, e.current_txn_first_offset)
            for pid, e in ps.producers.items()
        },
        list(ps.ongoing),
        log.last_stable_offset,
    )


def build_mixed_log(tmp: Path) -> PartitionLog:
    log = open_log(tmp, segment_bytes=250)
    append(log, txn_batch(1, 0))  # 0-1
    append(log, txn_batch(2, 0))  # 2-3
    end(log, 2, committed=False, coord=1)  # 4
    append(log, plain_batch(pid=3, seq=0))  # 5
    append(log, txn_batch(1, 2))  # 6-7
    end(log, 1, committed=True, coord=1)  # 8
    append(log, txn_batch(4, 0, epoch=2))  # 9-10, left open
    assert len(log.segments) > 2
    return log


def test_clean_reopen_loads_the_snapshot_instead_of_scanning(tmp_path: Path) -> None:
    log = build_mixed_log(tmp_path)
    before = state_of(log)
    leo = log.log_end_offset
    log.close()
    snap = tmp_path / "t-0" / f"{leo:020d}.snapshot"
    assert snap.exists()
    reopened = open_log(tmp_path, segment_bytes=250)
    assert state_of(reopened) == before
    reopened.close()
    # prove the snapshot is what was used: a producer only the snapshot knows survives a reopen
    from kafkapy.storage.producer_snapshot import decode_snapshot, encode_snapshot
    from kafkapy.storage.producer_state import ProducerEntry

    entries = decode_snapshot(snap.read_bytes()) + [ProducerEntry(77, 5)]
    snap.write_bytes(encode_snapshot(entries))
    again = open_log(tmp_path, segment_bytes=250)
    assert 77 in again.producer_state.producers
    again.close()


def test_corrupt_snapshot_falls_back_to_an_older_one_or_a_replay(tmp_path: Path) -> None:
    log = build_mixed_log(tmp_path)
    before = state_of(log)
    log.close()
    d = tmp_path / "t-0"
    for snap in d.glob("*.snapshot"):
        data = bytearray(snap.read_bytes())
        data[-1] ^= 0xFF
        snap.write_bytes(bytes(data))
    reopened = open_log(tmp_path, segment_bytes=250)
    assert state_of(reopened) == before
    reopened.close()


def test_recovery_rebuilds_txnindex_and_state(tmp_path: Path) -> None:
    log = build_mixed_log(tmp_path)
    before = state_of(log)
    index_files = {p.name: p.read_bytes() for p in (tmp_path / "t-0").glob("*.txnindex")}
    assert index_files
    for p in (tmp_path / "t-0").glob("*.txnindex"):
        p.unlink()
    for p in (tmp_path / "t-0").glob("*.snapshot"):
        p.unlink()
    # no close (a crash): recover from offset 0
    recovered = open_log(tmp_path, recover=True, segment_bytes=250)
    assert state_of(recovered) == before
    assert {p.name: p.read_bytes() for p in (tmp_path / "t-0").glob("*.txnindex")} == index_files
    recovered.close()


def test_truncation_below_a_marker_reopens_the_transaction(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0))  # 0-1
    end(log, 1, committed=False)  # 2
    append(log, plain_batch())  # 3
    log.truncate_to(2)
    assert log.log_end_offset == 2
    assert log.producer_state.producers[1].current_txn_first_offset == 0
    assert log.last_stable_offset == 0
    assert log.segments[-1].txn_index.entries() == []
    # the new leader's abort closes it again
    end(log, 1, committed=False, coord=1)
    assert [e.last_offset for e in log.segments[-1].txn_index.entries()] == [2]
    log.close()


def test_follower_append_builds_the_same_state_and_index(tmp_path: Path) -> None:
    leader = build_mixed_log(tmp_path / "leader")
    follower = PartitionLog.open(
        tmp_path / "follower", "t", 0, TID, LogConfig(segment_bytes=250), recover=False
    )
    while follower.log_end_offset < leader.log_end_offset:  # one segment per read
        follower.append_as_follower(leader.read_bytes(follower.log_end_offset, 10**7), now_ms=T0)
    assert state_of(follower) == state_of(leader)
    aborted = [e for s in follower.segments for e in s.txn_index.entries()]
    assert aborted == [e for s in leader.segments for e in s.txn_index.entries()]
    leader.close()
    follower.close()


def test_retention_takes_the_txnindex_and_snapshot_along(tmp_path: Path) -> None:
    log = open_log(tmp_path, file_delete_delay_ms=0, retention_ms=1)
    append(log, txn_batch(1, 0))
    end(log, 1, committed=False)
    log.roll()
    append(log, plain_batch())
    log.roll()
    d = tmp_path / "t-0"
    assert (d / "00000000000000000000.txnindex").exists()
    assert log.delete_old_segments(T0 + 10**9) == 2
    assert not (d / "00000000000000000000.txnindex").exists()
    assert not (d / "00000000000000000003.snapshot").exists()
    assert (d / "00000000000000000004.snapshot").exists()
    log.close()


# ---- kafka-dump-log ---------------------------------------------------------------------


def test_dump_log_prints_markers_txn_index_and_snapshots(tmp_path: Path) -> None:
    import io

    from kafkapy.cli import dump_log

    log = open_log(tmp_path)
    append(log, txn_batch(1, 0, n=2))  # 0-1
    end(log, 1, committed=False, coord=7)  # 2
    append(log, txn_batch(2, 0, n=1, epoch=4))  # 3, left open
    log.close()
    d = tmp_path / "t-0"
    out = io.StringIO()
    dump_log.main(["--files", str(d / "00000000000000000000.log"), "--deep-iteration"], out=out)
    lines = out.getvalue().splitlines()
    control = [ln for ln in lines if "isControl: true" in ln]
    assert len(control) == 1 and "isTransactional: true" in control[0]
    assert control[0].startswith(
        "baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1 "
        "producerEpoch: 0"
    )
    marker = lines[lines.index(control[0]) + 1]
    assert marker.startswith("| offset: 2 CreateTime: ")
    assert marker.endswith(
        "keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: ABORT coordinatorEpoch: 7"
    )
    out = io.StringIO()
    dump_log.main(["--files", str(d / "00000000000000000000.txnindex")], out=out)
    assert out.getvalue().splitlines()[1:] == [
        "version: 0 producerId: 1 firstOffset: 0 lastOffset: 2 lastStableOffset: 3"
    ]
    out = io.StringIO()
    dump_log.main(["--files", str(d / "00000000000000000004.snapshot")], out=out)
    snap = out.getvalue().splitlines()[1:]
    assert snap == [
        f"producerId: 1 producerEpoch: 0 coordinatorEpoch: 7 currentTxnFirstOffset: "
        f"OptionalLong.empty lastTimestamp: {T0} firstSequence: 0 lastSequence: 1 "
        f"lastOffset: 1 offsetDelta: 1 timestamp: {T0}",
        f"producerId: 2 producerEpoch: 4 coordinatorEpoch: -1 currentTxnFirstOffset: "
        f"OptionalLong[3] lastTimestamp: {T0} firstSequence: 0 lastSequence: 0 "
        f"lastOffset: 3 offsetDelta: 0 timestamp: {T0}",
    ]


def test_snapshot_file_bytes_follow_kafkas_layout(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(9, 0, n=3, epoch=2))  # 0-2, open
    log.close()
    raw = (tmp_path / "t-0" / "00000000000000000003.snapshot").read_bytes()
    from crc32c import crc32c

    version, crc, count = struct.unpack_from(">hIi", raw)
    assert (version, count, len(raw)) == (1, 1, 2 + 4 + 4 + 46)
    assert crc == crc32c(raw[6:])
    assert struct.unpack_from(">qhiqiqiq", raw, 10) == (9, 2, 2, 2, 2, T0 + 2, -1, 0)


def _spec_table_bytes(section: str) -> list[int]:
    """The 'bytes' column of the first table under a heading of storage_formats.md."""
    text = (
        Path(__file__).resolve().parents[1] / "protocol_specs" / "storage_formats.md"
    ).read_text()
    body = text[text.index(section) :]
    rows = []
    for line in body.splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows.append(int(cells[0]))
        elif rows and not line.startswith("|"):
            break
    return rows


def test_spec_and_code_agree_on_txn_index_and_snapshot_layouts() -> None:
    from kafkapy.storage import producer_snapshot, txn_index

    assert sum(_spec_table_bytes("## Transaction index entry (34 bytes")) == 34
    assert txn_index.ENTRY_SIZE == 34
    header = _spec_table_bytes("## Producer state snapshot")
    assert header[:3] == [2, 4, 4]
    assert sum(_spec_table_bytes("Entry (one per producer id)")) == 46
    assert producer_snapshot._ENTRY.size == 46
    assert producer_snapshot.ENTRIES_OFFSET == 6


def test_corrupt_txn_index_is_rebuilt_at_open(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    append(log, txn_batch(1, 0))  # 0-1
    end(log, 1, committed=False)  # 2
    log.close()
    path = tmp_path / "t-0" / "00000000000000000000.txnindex"
    good = path.read_bytes()
    path.write_bytes(struct.pack(">hqqqq", 7, 1, 0, 2, 3))  # an unknown entry version
    reopened = open_log(tmp_path)  # a clean shutdown, but the index cannot be trusted
    assert path.read_bytes() == good
    _, aborted = reopened.read_committed(0, 10**6)
    assert [(a.producer_id, a.first_offset) for a in aborted] == [(1, 0)]
    reopened.close()


def test_coordinator_appends_skip_sequence_checks_but_not_epochs(tmp_path: Path) -> None:
    # a group coordinator writes each transactional offset commit of a producer with base
    # sequence 0 (Kafka's AppendOrigin.COORDINATOR): never a duplicate, never out of order
    log = open_log(tmp_path)

    def coordinator_append(seq: int, epoch: int = 1):
        return log.append_as_leader(
            txn_batch(5, seq, n=1, epoch=epoch),
            leader_epoch=0,
            now_ms=T0,
            verification_guard=SKIP_VERIFICATION,
            coordinator=True,
        )

    assert coordinator_append(0).base_offset == 0
    assert coordinator_append(0).base_offset == 1  # not taken for a retry of offset 0
    with pytest.raises(InvalidProducerEpochError):
        coordinator_append(0, epoch=0)
    with pytest.raises(InvalidTxnStateError):  # a plain write while the transaction is open
        plain = encode_batch(
            [Record(0, T0, None, b"p", [])], producer_id=5, producer_epoch=1, base_sequence=0
        )
        log.append_as_leader(plain, leader_epoch=0, now_ms=T0, coordinator=True)
    log.close()
