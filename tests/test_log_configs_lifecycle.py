"""Topic/broker config rules (validation messages, dynamic layers and their sources, the LogConfig
they produce, incremental operations) and the produce-side effects of topic configs (null keys
on compacted topics, timestamp bounds, broker-side recompression), plus the dump tool."""

from __future__ import annotations

import io
import uuid
from types import SimpleNamespace

import pytest

from kafkapy.cli import dump_log
from kafkapy.protocol.errors import ErrorCode
from kafkapy.protocol.record_batch import (
    InvalidRecordError,
    Record,
    decode_records,
    encode_batch,
    iter_batches,
)
from kafkapy.server.config.config_changes import (
    APPEND,
    DELETE,
    SET,
    SUBTRACT,
    TOPIC,
    ConfigChangeError,
    incremental,
)
from kafkapy.server.config.dynamic_broker_configs import config_error
from kafkapy.server.config.log_configs import (
    BrokerLayers,
    effective_topic_config,
    log_config_for,
    validate_topic_config,
    validate_topic_configs,
)
from kafkapy.storage.config import LogConfig
from kafkapy.storage.log import PartitionLog
from kafkapy.storage.log_validator import InvalidTimestampError

NOW = 1_700_000_000_000
TID = uuid.UUID(int=5)


def test_validation_messages_name_key_and_range() -> None:
    assert validate_topic_config("retention.ms", "-1") is None
    msg = validate_topic_config("retention.ms", "-2")
    assert msg == "Invalid value -2 for configuration retention.ms: Value must be at least -1"
    msg = validate_topic_config("min.cleanable.dirty.ratio", "2")
    assert msg.endswith("Value must be no more than 1.0")
    assert "String must be one of" in validate_topic_config("cleanup.policy", "compact,bogus")
    assert validate_topic_config("cleanup.policy", "compact,delete") is None
    assert "Not a number of type INT" in validate_topic_config("segment.bytes", "3000000000")
    assert "either true or false" in validate_topic_config("unclean.leader.election.enable", "x")
    assert validate_topic_config("nope", "1") == "Unknown topic config name: nope"
    msg = validate_topic_configs({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
    assert "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)" in msg


def test_broker_dynamic_key_validation() -> None:
    assert config_error({"log.retention.ms": "2"}) is None
    assert "dynamically" in config_error({"log.retention.hours": "2"})  # read-only in 4.4
    assert config_error({"log.cleaner.backoff.ms": "100"}) is None
    msg = config_error({"log.segment.bytes": "1"})
    assert "configuration log.segment.bytes" in msg and "at least 14" in msg
    assert "Cannot update these configs dynamically" in config_error({"num.partitions": "2"})


def test_dynamic_layers_sources_and_synonyms() -> None:
    layers = BrokerLayers(
        dynamic={"log.retention.ms": "1000"},
        dynamic_default={"log.retention.hours": "5", "log.segment.bytes": "5000"},
        static={"log.retention.hours": "2", "log.segment.bytes": "9000"},
    )
    eff = effective_topic_config(layers, {"cleanup.policy": "compact"})
    value, source, syn = eff["retention.ms"]
    assert (value, source) == ("1000", "DYNAMIC_BROKER_CONFIG")
    assert syn == [
        ("log.retention.ms", "1000", "DYNAMIC_BROKER_CONFIG"),
        ("log.retention.hours", "5", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ("log.retention.hours", "2", "STATIC_BROKER_CONFIG"),
        ("log.retention.hours", "168", "DEFAULT_CONFIG"),  # log.retention.ms has no default
    ]
    assert eff["segment.bytes"][:2] == ("5000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert eff["cleanup.policy"][:2] == ("compact", "DYNAMIC_TOPIC_CONFIG")
    cfg = log_config_for(layers, {"cleanup.policy": "compact,delete", "compression.type": "lz4"})
    assert cfg.retention_ms == 1000 and cfg.segment_bytes == 5000
    assert cfg.compact and cfg.delete and cfg.target_codec == 3
    # plain mappings still work (static broker props only)
    assert log_config_for({"log.retention.hours": "1"}, {}).retention_ms == 3_600_000


def test_incremental_operations() -> None:
    broker = SimpleNamespace(broker_props={}, dynamic_configs={}, dynamic_default_configs={})
    cur = {"retention.ms": "5"}
    new = incremental(broker, TOPIC, cur, [("cleanup.policy", APPEND, "compact")])
    assert new["cleanup.policy"] == "delete,compact"  # appended to the default
    new = incremental(broker, TOPIC, new, [("cleanup.policy", SUBTRACT, "delete")])
    assert new["cleanup.policy"] == "compact"
    new = incremental(broker, TOPIC, new, [("retention.ms", DELETE, None), ("x", SET, "1")])
    assert "retention.ms" not in new and new["x"] == "1"
    with pytest.raises(ConfigChangeError) as e:
        incremental(broker, TOPIC, {}, [("retention.ms", APPEND, "1")])
    assert e.value.code == ErrorCode.invalid_config
    with pytest.raises(ConfigChangeError) as e:
        incremental(broker, TOPIC, {}, [("a", SET, "1"), ("a", SET, "2")])
    assert e.value.code == ErrorCode.invalid_request
    with pytest.raises(ConfigChangeError):
        incremental(broker, TOPIC, {}, [("a", 9, "1")])


def _log(tmp_path, **cfg) -> PartitionLog:
    return PartitionLog.open(tmp_path, "t", 0, TID, LogConfig(**cfg), recover=False)


def test_compacted_log_rejects_null_keys(tmp_path) -> None:
    log = _log(tmp_path, cleanup_policy=("compact",))
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(
            encode_batch([Record(0, NOW, None, b"v", [])]), leader_epoch=0, now_ms=NOW
        )
    log.append_as_leader(encode_batch([Record(0, NOW, b"k", b"v", [])]), leader_epoch=0, now_ms=NOW)
    log.close()


def test_timestamp_bounds(tmp_path) -> None:
    log = _log(tmp_path, message_timestamp_before_max_ms=1000, message_timestamp_after_max_ms=500)
    ok = encode_batch([Record(0, NOW - 900, b"k", b"v", []), Record(0, NOW + 400, b"k", b"v", [])])
    log.append_as_leader(ok, leader_epoch=0, now_ms=NOW)
    for ts in (NOW - 1001, NOW + 501):
        with pytest.raises(InvalidTimestampError) as e:
            log.append_as_leader(
                encode_batch([Record(0, NOW, b"k", b"v", []), Record(0, ts, b"k", b"v", [])]),
                leader_epoch=0,
                now_ms=NOW,
            )
        assert e.value.error_code == 32 and e.value.record_errors is not None
        [(index, message)] = e.value.record_errors.errors  # KIP-467: record 1 named
        assert index == 1 and message.startswith(f"Timestamp {ts} of message with offset 1")
    # LogAppendTime topics do not check producer timestamps
    log.update_config(
        LogConfig(message_timestamp_type="LogAppendTime", message_timestamp_before_max_ms=1)
    )
    log.append_as_leader(encode_batch([Record(0, 5, b"k", b"v", [])]), leader_epoch=0, now_ms=NOW)
    log.close()


@pytest.mark.parametrize(("produced", "topic"), [(0, "gzip"), (3, "zstd"), (4, "uncompressed")])
def test_recompression_to_topic_codec(tmp_path, produced: int, topic: str) -> None:
    codec = {"gzip": 1, "zstd": 4, "uncompressed": 0}[topic]
    log = _log(tmp_path, compression_type=topic)
    recs = [Record(0, NOW + i, b"k%d" % i, b"v%d" % i, [("h", b"x")]) for i in range(3)]
    batch = encode_batch(recs, codec=produced, producer_id=9, producer_epoch=0, base_sequence=0)
    log.append_as_leader(encode_batch([Record(0, NOW, b"a", b"b", [])]), leader_epoch=0, now_ms=NOW)
    res = log.append_as_leader(batch, leader_epoch=0, now_ms=NOW)
    assert (res.base_offset, res.last_offset) == (1, 3)
    data = log.read_bytes(1, 10**6)
    [(pos, h)] = list(iter_batches(data))
    assert h.codec == codec and h.producer_id == 9 and h.base_sequence == 0
    out = decode_records(data)  # checks the CRC-covered layout decodes
    assert [(r.offset, r.key, r.value, r.headers) for r in out] == [
        (1 + i, r.key, r.value, r.headers) for i, r in enumerate(recs)
    ]
    # an idempotent retry of the original batch is still recognised as a duplicate
    assert log.append_as_leader(batch, leader_epoch=0, now_ms=NOW).duplicate
    log.close()


def test_dump_tool_log_and_indexes(tmp_path) -> None:
    log = _log(tmp_path, segment_bytes=400, index_interval_bytes=1)
    for i in range(4):
        log.append_as_leader(
            encode_batch([Record(0, NOW + i, b"key%d" % i, b"value%d" % i + bytes(100), [])]),
            leader_epoch=3,
            now_ms=NOW,
        )
    log.close()
    d = tmp_path / "t-0"
    seg = d / "00000000000000000000.log"
    out = io.StringIO()
    dump_log.main(["--files", str(seg), "--deep-iteration"], out=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"Dumping {seg}" and lines[1] == "Log starting offset: 0"
    assert lines[2].startswith(
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 3 isTransactional: false isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: "
    )
    crc = lines[2].split("crc: ")[1].split()[0]
    assert lines[2].endswith(f"magic: 2 compresscodec: none crc: {crc} isvalid: true")
    assert lines[3].startswith("| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 106")
    assert "payload" not in lines[3]
    out = io.StringIO()
    dump_log.main(["--files", str(seg), "--print-data-log"], out=out)
    assert "key: key0 payload: value0" in out.getvalue()
    idx = sorted(d.glob("*.index"))
    out = io.StringIO()
    dump_log.main(["--files", ",".join(str(p) for p in idx)], out=out)
    assert "Mismatches" not in out.getvalue()
    out = io.StringIO()
    dump_log.main(["--files", str(idx[0]), "--index-sanity-check"], out=out)
    assert out.getvalue().splitlines()[-1] == f"{idx[0]} passed sanity check."
    out = io.StringIO()
    tidx = sorted(d.glob("*.timeindex"))[0]
    dump_log.main(["--files", str(tidx)], out=out)
    assert out.getvalue().splitlines()[1].startswith("timestamp: 17000000000")
    # a torn tail is reported, not a traceback
    with open(seg, "ab") as f:
        f.write(b"\x00" * 20)
    out = io.StringIO()
    dump_log.main(["--files", str(seg)], out=out)
    assert "Found 20 invalid bytes at the end" in out.getvalue()
