"""LogManager, checkpoints, indexes: startup, clean/unclean restart, files on disk."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kafkapy.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from kafkapy.storage.checkpoints import (
    read_offset_checkpoint,
    read_partition_metadata,
    topic_id_from_str,
    topic_id_to_str,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.errors import InconsistentClusterIdError
from kafkapy.storage.index import OffsetIndex, TimeIndex
from kafkapy.storage.log_manager import LogManager, parse_partition_dir

T0 = 1_700_000_000_000
TID = uuid.uuid4()


def batch(n: int = 2) -> bytes:
    return encode_batch([Record(0, T0 + i, b"k", b"v" * 50) for i in range(n)])


def all_offsets(data: bytes) -> list[int]:
    out = []
    for pos, h in iter_batches(data):
        out += [r.offset for r in decode_records(data[pos : pos + h.size])]
    return out


def test_offset_index(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "x.index", 100, 1000)
    assert idx.lookup(150) == (100, 0)
    for i in range(10):
        idx.append(100 + 10 * i, 1000 * i)
    idx.append(150, 7)  # not increasing: ignored
    assert idx.lookup(155) == (150, 5000)
    assert idx.lookup(99) == (100, 0)
    assert idx.lookup(10**9) == (190, 9000)
    idx.truncate_to(150)
    assert len(idx) == 5 and (tmp_path / "x.index").stat().st_size == 40
    idx.close()
    again = OffsetIndex(tmp_path / "x.index", 100, 1000)
    again.load()
    assert again.lookup(10**9) == (140, 4000)
    again.close()
    raw = (tmp_path / "x.index").read_bytes()
    assert raw[8:16] == (10).to_bytes(4, "big") + (1000).to_bytes(4, "big")


def test_time_index(tmp_path: Path) -> None:
    ti = TimeIndex(tmp_path / "x.timeindex", 50, 2)
    ti.maybe_append(T0, 55)
    ti.maybe_append(T0, 56)  # not greater: ignored
    ti.maybe_append(T0 + 10, 60)
    ti.maybe_append(T0 + 20, 70)  # full
    assert len(ti) == 2
    ti.maybe_append(T0 + 20, 70, skip_full_check=True)
    assert ti.lookup(T0 + 15) == (T0 + 10, 60)
    assert ti.lookup(T0 - 1) == (-1, 50)
    assert (tmp_path / "x.timeindex").read_bytes()[:12] == T0.to_bytes(8, "big") + (5).to_bytes(
        4, "big"
    )
    ti.close()


def test_topic_id_text_and_dir_names() -> None:
    u = uuid.uuid4()
    s = topic_id_to_str(u)
    assert len(s) == 22 and "=" not in s and topic_id_from_str(s) == u
    assert parse_partition_dir("my-topic.x-12") == ("my-topic.x", 12)
    assert parse_partition_dir("t-0.abc-delete") is None
    assert parse_partition_dir("meta.properties") is None


def test_clean_restart(tmp_path: Path) -> None:
    m = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig(segment_bytes=1000))
    m.startup(1, "clusterA")
    logs = [m.create_log("topic", p, TID) for p in range(3)]
    assert m.create_log("topic", 0, TID) is logs[0]
    for log in logs:
        for _ in range(10):
            log.append_as_leader(batch(), leader_epoch=2, now_ms=T0)
    logs[1].delete_records_before(7)
    m.shutdown()
    for d in ("a", "b"):
        assert (tmp_path / d / ".kafka_cleanshutdown").exists()
        props = (tmp_path / d / "meta.properties").read_text()
        assert "broker.id=1" in props and "cluster.id=clusterA" in props
    rp = read_offset_checkpoint(tmp_path / "a" / "recovery-point-offset-checkpoint")
    rp.update(read_offset_checkpoint(tmp_path / "b" / "recovery-point-offset-checkpoint"))
    assert rp == {("topic", 0): 20, ("topic", 1): 20, ("topic", 2): 20}
    text = (tmp_path / "a" / "log-start-offset-checkpoint").read_text().splitlines()
    assert text[0] == "0" and int(text[1]) == len(text) - 2

    m = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig(segment_bytes=1000))
    m.startup(1, "clusterA")
    assert not (tmp_path / "a" / ".kafka_cleanshutdown").exists()
    assert sorted(log.partition for log in m.all_logs()) == [0, 1, 2]
    log1 = m.get_log("topic", 1)
    assert log1 is not None and log1.log_start_offset == 7 and log1.topic_id == TID
    assert log1.end_offset_for_epoch(2) == (2, 20)
    log1.append_as_leader(batch(), leader_epoch=2, now_ms=T0)
    assert all_offsets(log1.read_bytes(7, 10**6))[0] == 6  # batch holding 7
    assert all_offsets(log1.read_bytes(20, 10**6)) == [20, 21]
    m.delete_log("topic", 2)
    assert m.get_log("topic", 2) is None
    assert not any(p.name.startswith("topic-2") for d in "ab" for p in (tmp_path / d).iterdir())
    m.shutdown()


def test_unclean_restart_recovers(tmp_path: Path) -> None:
    m = LogManager([tmp_path], LogConfig())
    m.startup(0, "c")
    log = m.create_log("t", 0, TID)
    for _ in range(5):
        log.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    # simulate kill -9: no shutdown; a partially written batch at the end
    seg = tmp_path / "t-0" / "00000000000000000000.log"
    with open(seg, "ab") as f:
        f.write(batch(3)[:40])
    m2 = LogManager([tmp_path], LogConfig())
    m2.startup(0, "c")
    log2 = m2.get_log("t", 0)
    assert log2 is not None and log2.log_end_offset == 10
    assert read_partition_metadata(tmp_path / "t-0" / "partition.metadata") == TID
    log2.append_as_leader(batch(), leader_epoch=0, now_ms=T0)
    assert all_offsets(log2.read_bytes(0, 10**6)) == list(range(12))
    m2.shutdown()
    log.close()


def test_cluster_id_mismatch(tmp_path: Path) -> None:
    m = LogManager([tmp_path], LogConfig())
    m.startup(0, "one")
    m.shutdown()
    with pytest.raises(InconsistentClusterIdError, match="cluster.id"):
        LogManager([tmp_path], LogConfig()).startup(0, "two")
    with pytest.raises(InconsistentClusterIdError, match="broker.id"):
        LogManager([tmp_path], LogConfig()).startup(5, "one")


def test_new_logs_wait_for_the_background_metadata_flush(tmp_path: Path) -> None:
    lm = LogManager([tmp_path], LogConfig())
    lm.startup(0, "c")
    told = []
    lm.on_metadata_pending = lambda: told.append(1)
    logs = [lm.create_log("t", p, TID) for p in range(3)]
    assert len(told) == 3 and lm.metadata_pending == logs
    pending, lm.metadata_pending = lm.metadata_pending, []
    lm.delete_log("t", 2)  # deleted before the flush: nothing is written for it
    lm.flush_pending_metadata(pending)
    for p in (0, 1):
        assert read_partition_metadata(tmp_path / f"t-{p}" / "partition.metadata") == TID
    assert not (tmp_path / "t-2").exists()
    lm.shutdown()
