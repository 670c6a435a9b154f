"""Unit tests (no JVM, no broker): the kafkapy data source's options, offsets and rate limit,
and the access-log generator."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

pytest.importorskip("pyspark")

from kafkapy.pipelines.access_log_generator import AccessLogGenerator, format_time
from kafkapy.pipelines.access_log_job import LOG_REGEX
from kafkapy.spark.kafka_io import from_json_offsets, to_json_offsets
from kafkapy.spark.options import EARLIEST, LATEST, source_options
from kafkapy.spark.source import rate_limit

B = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_defaults_match_spark_kafka_source():
    batch = source_options({**B, "subscribe": "a, b"}, streaming=False)
    assert batch.subscribe == ("a", "b")
    assert batch.starting.kind == "earliest" and batch.ending.kind == "latest"
    assert batch.fail_on_data_loss and not batch.include_headers
    assert batch.max_offsets_per_trigger is None
    stream = source_options({**B, "subscribePattern": "logs-.*"}, streaming=True)
    assert stream.starting.kind == "latest" and stream.pattern == "logs-.*"


def test_option_names_are_case_insensitive_and_kafka_conf_passes_through():
    o = source_options({**B, "SUBSCRIBE": "t", "failondataloss": "FALSE",
                        "kafka.isolation.level": "read_committed",
                        "kafka.client.id": "me", "kafka.max.poll.records": "10"},
                       streaming=True)
    assert o.subscribe == ("t",) and not o.fail_on_data_loss
    assert o.kafka_conf == {"isolation.level": "read_committed", "client.id": "me"}


def test_offsets_json():
    o = source_options({**B, "assign": '{"t":[1,0]}',
                        "startingOffsets": '{"t":{"0":23,"1":-2}}',
                        "endingOffsets": '{"t":{"0":50,"1":-1}}'}, streaming=False)
    assert o.assign == {"t": [0, 1]}
    assert o.starting.offsets == {"t": {0: 23, 1: EARLIEST}}
    assert o.ending.offsets == {"t": {0: 50, 1: LATEST}}
    o = source_options({**B, "subscribe": "t", "startingTimestamp": "1000",
                        "startingOffsets": "earliest"}, streaming=True)
    assert o.starting.kind == "timestamp" and o.starting.timestamp == 1000


@pytest.mark.parametrize("extra, message", [
    ({}, "exactly one of the options"),
    ({"subscribe": "a", "assign": '{"a":[0]}'}, "exactly one of the options"),
    ({"subscribe": "t", "startingOffsets": "latest"}, "cannot be 'latest' for a batch"),
    ({"subscribe": "t", "endingOffsets": "earliest"}, "'endingOffsets' cannot be 'earliest'"),
    ({"subscribe": "t", "endingOffsets": '{"t":{"0":-2}}'}, "option 'endingOffsets': bad offset"),
    ({"subscribe": "t", "startingOffsets": "{x"}, "'startingOffsets' is not valid JSON"),
    ({"assign": "[1]"}, "option 'assign' must look like"),
    ({"subscribePattern": "("}, "'subscribePattern' is not a valid regex"),
    ({"subscribe": "t", "maxOffsetsPerTrigger": "0"}, "'maxOffsetsPerTrigger' must be >= 1"),
    ({"subscribe": "t", "includeHeaders": "yes"}, "'includeHeaders' must be 'true' or 'false'"),
    ({"subscribe": "t", "kafka.enable.auto.commit": "true"}, "kafka.enable.auto.commit"),
    ({"subscribe": "t", "minPartitions": "4"}, "'minPartitions' is not supported"),
    ({"subscribe": "t", "startingOffsetsByTimestampStrategy": "x"}, "must be 'error' or"),
])
def test_bad_options_are_named(extra, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        source_options({**B, **extra}, streaming=False)


def test_missing_bootstrap_and_streaming_end():
    with pytest.raises(ValueError, match="kafka.bootstrap.servers"):
        source_options({"subscribe": "t"}, streaming=True)
    with pytest.raises(ValueError, match="'endingOffsets' is for batch queries only"):
        source_options({**B, "subscribe": "t", "endingOffsets": "latest"}, streaming=True)


def test_offset_json_round_trip():
    offs = {("a", 0): 5, ("a", 1): 7, ("b", 0): 0}
    doc = to_json_offsets(offs)
    assert doc == {"a": {"0": 5, "1": 7}, "b": {"0": 0}}
    assert from_json_offsets(doc) == offs


def test_rate_limit_splits_by_available_like_spark():
    begin = {("t", 0): 0, ("t", 1): 0, ("t", 2): 10}
    latest = {("t", 0): 100, ("t", 1): 50, ("t", 2): 11}
    end = rate_limit(begin, latest, 30)
    # proportional: 100/151*30 = 19.8 -> 19, 50/151*30 = 9.9 -> 9, 1/151*30 = 0.2 -> 1
    assert end == {("t", 0): 19, ("t", 1): 9, ("t", 2): 11}
    assert rate_limit(begin, latest, 1000) == latest


def test_generator_lines_are_realistic_and_reproducible():
    start = datetime(2025, 3, 12, 14, 0, tzinfo=UTC)
    lines = AccessLogGenerator(seed=3, malformed_fraction=0.1).lines(
        3000, start, timedelta(minutes=5))
    again = AccessLogGenerator(seed=3, malformed_fraction=0.1).lines(
        3000, start, timedelta(minutes=5))
    assert lines == again
    rx = re.compile(LOG_REGEX)
    good = [ln for ln in lines if ln.ok]
    bad = [ln for ln in lines if not ln.ok]
    assert 200 < len(bad) < 400
    statuses, paths = [], []
    for ln in good:
        m = rx.match(ln.raw.decode())
        assert m, ln.raw
        datetime.strptime(m.group(3), "%d/%b/%Y:%H:%M:%S %z")
        statuses.append(int(m.group(7)))
        paths.append(m.group(5).split("?")[0])
    classes = {s // 100 for s in statuses}
    assert classes == {2, 3, 4, 5}
    top = max(set(paths), key=paths.count)
    assert paths.count(top) > len(paths) / 20  # skewed popularity
    for ln in bad:
        try:
            text = ln.raw.decode()
        except UnicodeDecodeError:
            continue
        m = rx.match(text)
        if m:  # only an impossible date may match the shape
            with pytest.raises(ValueError):
                datetime.strptime(m.group(3), "%d/%b/%Y:%H:%M:%S %z")
    assert format_time(start) == "12/Mar/2025:14:00:00 +0000"
